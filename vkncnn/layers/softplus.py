"""Softplus: y = log(1 + exp(x))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Softplus")
class Softplus(UnaryLayer):
    gpu_op = elementwise.SOFTPLUS

    def forward_cpu(self, bottoms, opt):
        return [activation.softplus(bottoms[0])]
