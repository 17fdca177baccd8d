"""TanH: y = tanh(x)."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("TanH")
class TanH(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def forward_cpu(self, bottoms, opt):
        return [activation.tanh(bottoms[0])]
