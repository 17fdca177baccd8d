"""ReLU: y = max(x, 0), or x * slope for x < 0 when slope != 0 (LeakyReLU)."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import ElementwiseBatch, UnaryLayer


@register_layer("ReLU")
class ReLU(ElementwiseBatch, UnaryLayer):
    gpu_op = elementwise.RELU

    def load_param(self, pd) -> int:
        self.slope = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.relu(bottoms[0], self.slope)]

    def gpu_params(self) -> tuple:
        return (self.slope,)

    def activation_spec(self) -> list:
        """This ReLU as a fused activation (activation.comp's type, p0, p1) of the layer before."""
        return [1, 0.0, 0.0] if self.slope == 0 else [2, float(self.slope), 0.0]
