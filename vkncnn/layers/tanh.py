"""TanH: y = tanh(x)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("TanH")
class TanH(UnaryLayer):
    gpu_op = elementwise.TANH

    def forward_cpu(self, bottoms, opt):
        return [activation.tanh(bottoms[0])]
