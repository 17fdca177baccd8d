"""HardSigmoid: y = clamp(alpha * x + beta, 0, 1) (defaults alpha 0.2, beta 0.5)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("HardSigmoid")
class HardSigmoid(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 0.2)
        self.beta = pd.get(1, 0.5)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.hardsigmoid(bottoms[0], self.alpha, self.beta)]

    # -- GPU: unaryop.comp with op HARDSIGMOID --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.HARDSIGMOID, self.alpha, self.beta)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
