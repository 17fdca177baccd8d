"""Split: hand one blob to several consumers. No copy: blobs are never modified in place.

GPU: every output is a view of the input buffer (a new VkMat sharing it, refcounted).
"""

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Split")
class Split(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True

    def forward_cpu(self, bottoms, opt):
        return [bottoms[0]] * len(self.tops)

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        return [gather.view(x, x.numpy_shape()) for _ in self.tops]
