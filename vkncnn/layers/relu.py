"""ReLU: y = max(x, 0), or x * slope for x < 0 when slope != 0 (LeakyReLU)."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("ReLU")
class ReLU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.slope = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.relu(bottoms[0], self.slope)]
