"""GELU: y = 0.5 x (1 + erf(x / sqrt 2)); fast_gelu=1 uses the tanh approximation
0.5 x (1 + tanh(0.79788452 (x + 0.044715 x^3)))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("GELU")
class GELU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.fast_gelu = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.gelu(bottoms[0], fast=bool(self.fast_gelu))]

    # -- GPU: unaryop.comp, erf or tanh form --
    def create_pipeline(self, opt) -> int:
        op = elementwise.GELU_FAST if self.fast_gelu else elementwise.GELU
        self.gpu_op = elementwise.unary_gpu(self, opt, op)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
