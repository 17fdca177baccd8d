"""Threshold: y = 1 where x > threshold, else 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import UnaryLayer


@register_layer("Threshold")
class Threshold(UnaryLayer):
    gpu_op = elementwise.THRESHOLD

    def load_param(self, pd) -> int:
        self.threshold = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.threshold(bottoms[0], self.threshold)]

    def gpu_params(self) -> tuple:
        return (self.threshold,)
