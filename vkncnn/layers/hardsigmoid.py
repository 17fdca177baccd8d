"""HardSigmoid: y = clamp(alpha * x + beta, 0, 1) (defaults alpha 0.2, beta 0.5)."""

from vkncnn.cpu_fallback import activation
from vkncnn.layer import Layer, register_layer


@register_layer("HardSigmoid")
class HardSigmoid(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 0.2)
        self.beta = pd.get(1, 0.5)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.hardsigmoid(bottoms[0], self.alpha, self.beta)]
