"""Clip: y = min(max(x, min), max); the bounds default to -FLT_MAX and FLT_MAX."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("Clip")
class Clip(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.min = pd.get(0, -float(activation.FLT_MAX))
        self.max = pd.get(1, float(activation.FLT_MAX))
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.clip(bottoms[0], self.min, self.max)]

    # -- GPU: unaryop.comp with op CLIP --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.CLIP, self.min, self.max)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
