"""UnaryOp: one elementwise math function, chosen by op_type 0-27:
abs, neg, floor, ceil, square, sqrt, rsqrt, exp, log, sin, cos, tan, asin, acos,
atan, reciprocal, tanh, log10, round (half to even), trunc, sign, expm1, sinh, asinh,
cosh, acosh, atanh, log1p.

Edge values follow ncnn's vectorised math (cpu_fallback/activation.py): e.g. log(0) and
1/0 are nan and exp saturates at 2.4e38.
"""

from vkncnn.cpu_fallback import activation
from vkncnn.errors import ParamError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("UnaryOp")
class UnaryOp(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.op_type = pd.get(0, 0)
        if not 0 <= self.op_type < len(activation.UNARY_OPS):
            names = ", ".join(name for name, _ in activation.UNARY_OPS)
            last = len(activation.UNARY_OPS) - 1
            raise ParamError(f"UnaryOp op_type {self.op_type} is not one of 0-{last} ({names})")
        return 0

    def forward_cpu(self, bottoms, opt):
        return [activation.unary_op(bottoms[0], self.op_type)]

    # -- GPU: unaryop.comp, function UNARY_BASE + op_type --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = elementwise.unary_gpu(self, opt, elementwise.UNARY_BASE + self.op_type)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
