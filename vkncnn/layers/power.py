"""Power: y = (shift + x * scale) ^ power."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Power")
class Power(UnaryLayer):
    gpu_op = elementwise.POWER

    def load_param(self, pd) -> int:
        self.power = pd.get(0, 1.0)
        self.scale = pd.get(1, 1.0)
        self.shift = pd.get(2, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.power(bottoms[0], self.power, self.scale, self.shift)]

    def gpu_params(self) -> tuple:
        return (self.power, self.scale, self.shift)
