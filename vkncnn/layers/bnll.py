"""BNLL: y = log(1 + exp(x)), the binomial normal log likelihood (no params)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("BNLL")
class BNLL(UnaryLayer):
    gpu_op = elementwise.BNLL

    def forward_cpu(self, bottoms, opt):
        return [activation.bnll(bottoms[0])]
