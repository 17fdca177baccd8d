"""Log: y = log_base(shift + x * scale), with base = -1 meaning the natural log."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("Log")
class Log(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.base = pd.get(0, -1.0)
        self.scale = pd.get(1, 1.0)
        self.shift = pd.get(2, 0.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.log_layer(bottoms[0], self.base, self.scale, self.shift)]

    # -- GPU: unaryop.comp with op LOG --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.LOG, self.base, self.scale, self.shift)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
