"""ELU: y = x for x >= 0, alpha * (exp(x) - 1) for x < 0 (alpha defaults to 0.1)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("ELU")
class ELU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 0.1)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.elu(bottoms[0], self.alpha)]

    # -- GPU: unaryop.comp with op ELU --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.ELU, self.alpha)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
