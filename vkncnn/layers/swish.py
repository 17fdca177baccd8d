"""Swish (SiLU): y = x / (1 + exp(-x))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Swish")
class Swish(UnaryLayer):
    gpu_op = elementwise.SWISH

    def forward_cpu(self, bottoms, opt):
        return [activation.swish(bottoms[0])]
