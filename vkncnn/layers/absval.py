"""AbsVal: y = |x|."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("AbsVal")
class AbsVal(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def forward_cpu(self, bottoms, opt):
        return [activation.absval(bottoms[0])]

    # -- GPU: unaryop.comp with op ABS --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.ABS)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
