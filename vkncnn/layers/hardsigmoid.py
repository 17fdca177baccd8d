"""HardSigmoid: y = clamp(alpha * x + beta, 0, 1) (defaults alpha 0.2, beta 0.5)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("HardSigmoid")
class HardSigmoid(UnaryLayer):
    gpu_op = elementwise.HARDSIGMOID

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 0.2)
        self.beta = pd.get(1, 0.5)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.hardsigmoid(bottoms[0], self.alpha, self.beta)]

    def gpu_params(self) -> tuple:
        return (self.alpha, self.beta)
