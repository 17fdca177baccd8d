"""Mish: y = x * tanh(log(1 + exp(x)))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Mish")
class Mish(UnaryLayer):
    gpu_op = elementwise.MISH

    def forward_cpu(self, bottoms, opt):
        return [activation.mish(bottoms[0])]
