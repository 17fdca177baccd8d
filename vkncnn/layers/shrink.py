"""Shrink: y = x + bias for x < -lambd, x - bias for x > lambd, else 0
(0 bias, default 0; 1 lambd, default 0.5): Softshrink with bias = lambd, Hardshrink
with bias = 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Shrink")
class Shrink(UnaryLayer):
    gpu_op = elementwise.SHRINK

    def load_param(self, pd) -> int:
        self.bias = pd.get(0, 0.0)
        self.lambd = pd.get(1, 0.5)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.shrink(bottoms[0], self.bias, self.lambd)]

    def gpu_params(self) -> tuple:
        return (self.bias, self.lambd)
