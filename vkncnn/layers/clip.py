"""Clip: y = min(max(x, min), max); the bounds default to -FLT_MAX and FLT_MAX."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("Clip")
class Clip(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.min = pd.get(0, -float(activation.FLT_MAX))
        self.max = pd.get(1, float(activation.FLT_MAX))
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.clip(bottoms[0], self.min, self.max)]
