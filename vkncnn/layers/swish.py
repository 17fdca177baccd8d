"""Swish (SiLU): y = x / (1 + exp(-x))."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("Swish")
class Swish(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_cpu(self, bottoms, opt):
        return [activation.swish(bottoms[0])]
