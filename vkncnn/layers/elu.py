"""ELU: y = x for x >= 0, alpha * (exp(x) - 1) for x < 0 (alpha defaults to 0.1)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("ELU")
class ELU(UnaryLayer):
    gpu_op = elementwise.ELU

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 0.1)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.elu(bottoms[0], self.alpha)]

    def gpu_params(self) -> tuple:
        return (self.alpha,)
