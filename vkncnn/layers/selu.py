"""SELU: y = lambda * x for x >= 0, lambda * alpha * (exp(x) - 1) for x < 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("SELU")
class SELU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 1.67326324)
        self.lambd = pd.get(1, 1.050700987)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.selu(bottoms[0], self.alpha, self.lambd)]

    # -- GPU: unaryop.comp with op SELU --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.SELU, self.alpha, self.lambd)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
