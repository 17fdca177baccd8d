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

    def activation_spec(self) -> list:
        """This Swish as a fused activation (activation.comp's type 7) of the layer before."""
        return [7, 0.0, 0.0]
