"""Input: names a net input. Its w/h/d/c params are shape hints only, as in ncnn.

The extractor provides the blob, so an Input layer normally never runs; if it does
(a graph that feeds it), it passes its inputs through, on the GPU as views.
"""

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Input")
class Input(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True

    def load_param(self, pd) -> int:
        self.w = pd.get(0, 0)
        self.h = pd.get(1, 0)
        self.d = pd.get(11, 0)
        self.c = pd.get(2, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return list(bottoms)

    def forward_gpu(self, bottoms, cmd, opt):
        # new VkMat objects: the runtime may release an input and keep the output
        return [gather.view(x, x.numpy_shape()) for x in bottoms]
