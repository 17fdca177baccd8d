"""AbsVal: y = |x|."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("AbsVal")
class AbsVal(UnaryLayer):
    gpu_op = elementwise.ABS

    def forward_cpu(self, bottoms, opt):
        return [activation.absval(bottoms[0])]
