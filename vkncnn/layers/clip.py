"""Clip: y = min(max(x, min), max); the bounds default to -FLT_MAX and FLT_MAX."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import ElementwiseBatch, UnaryLayer


@register_layer("Clip")
class Clip(ElementwiseBatch, UnaryLayer):
    gpu_op = elementwise.CLIP

    def load_param(self, pd) -> int:
        self.min = pd.get(0, -float(activation.FLT_MAX))
        self.max = pd.get(1, float(activation.FLT_MAX))
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.clip(bottoms[0], self.min, self.max)]

    def gpu_params(self) -> tuple:
        return (self.min, self.max)
