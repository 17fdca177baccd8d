"""ReLU: y = max(x, 0), or x * slope for x < 0 when slope != 0 (LeakyReLU)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("ReLU")
class ReLU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.slope = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.relu(bottoms[0], self.slope)]

    # -- GPU: unaryop.comp with op RELU --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.RELU, self.slope)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
