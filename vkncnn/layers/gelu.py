"""GELU: y = 0.5 x (1 + erf(x / sqrt 2)); fast_gelu=1 uses the tanh approximation
0.5 x (1 + tanh(0.79788452 (x + 0.044715 x^3)))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("GELU")
class GELU(UnaryLayer):
    def load_param(self, pd) -> int:
        self.fast_gelu = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.gelu(bottoms[0], fast=bool(self.fast_gelu))]

    @property
    def gpu_op(self) -> int:
        return elementwise.GELU_FAST if self.fast_gelu else elementwise.GELU
