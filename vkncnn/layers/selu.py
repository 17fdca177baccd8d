"""SELU: y = lambda * x for x >= 0, lambda * alpha * (exp(x) - 1) for x < 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("SELU")
class SELU(UnaryLayer):
    gpu_op = elementwise.SELU

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 1.67326324)
        self.lambd = pd.get(1, 1.050700987)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.selu(bottoms[0], self.alpha, self.lambd)]

    def gpu_params(self) -> tuple:
        return (self.alpha, self.lambd)
