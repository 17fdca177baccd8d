"""Erf: y = erf(x), the Gauss error function (no params)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Erf")
class Erf(UnaryLayer):
    gpu_op = elementwise.ERF

    def forward_cpu(self, bottoms, opt):
        return [activation.erf(bottoms[0])]
