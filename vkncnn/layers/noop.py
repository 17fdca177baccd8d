"""Noop: passes its inputs through unchanged; top i is bottom i (extra bottoms are dropped).

ncnn runs Noop in place over all bottoms and then hands out the first `top_count`
of them, so `Noop output 2 1 a b output` makes `output` = `a`.

GPU: each output is a view of its input buffer (a new VkMat sharing it, refcounted).
"""

from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Noop")
class Noop(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True

    def _passed(self, bottoms):
        if len(self.tops) > len(bottoms):
            raise ShapeError(f"Noop has {len(bottoms)} inputs but {len(self.tops)} outputs")
        return bottoms[:len(self.tops)]

    def forward_cpu(self, bottoms, opt):
        return list(self._passed(bottoms))

    def forward_gpu(self, bottoms, cmd, opt):
        return [gather.view(x, x.numpy_shape()) for x in self._passed(bottoms)]
