"""CELU: y = x for x >= 0, alpha * (exp(x / alpha) - 1) below (0 alpha, default 1)."""

from vkncnn.cpu_fallback import activation
from vkncnn.errors import ParamError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("CELU")
class CELU(UnaryLayer):
    gpu_op = elementwise.CELU

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 1.0)
        if self.alpha == 0:
            raise ParamError("CELU alpha (0) must not be 0: it divides x")
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.celu(bottoms[0], self.alpha)]

    def gpu_params(self) -> tuple:
        return (self.alpha,)
