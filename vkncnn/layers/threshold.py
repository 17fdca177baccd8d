"""Threshold: y = 1 where x > threshold, else 0."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("Threshold")
class Threshold(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.threshold = pd.get(0, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.threshold(bottoms[0], self.threshold)]

    # -- GPU: unaryop.comp with op THRESHOLD --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.THRESHOLD, self.threshold)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
