"""Log: y = log_base(shift + x * scale), with base = -1 meaning the natural log."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Log")
class Log(UnaryLayer):
    gpu_op = elementwise.LOG

    def load_param(self, pd) -> int:
        self.base = pd.get(0, -1.0)
        self.scale = pd.get(1, 1.0)
        self.shift = pd.get(2, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.log_layer(bottoms[0], self.base, self.scale, self.shift)]

    def gpu_params(self) -> tuple:
        return (self.base, self.scale, self.shift)
