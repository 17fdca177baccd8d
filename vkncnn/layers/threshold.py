"""Threshold: y = 1 where x > threshold, else 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("Threshold")
class Threshold(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.threshold = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.threshold(bottoms[0], self.threshold)]
