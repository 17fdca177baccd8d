"""BinaryOp: an elementwise op on two blobs, or on one blob and the scalar b.

op_type: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 rsub (b - a),
8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 ratan2 = atan2(b, a), 12 fmod,
13 rfmod, 14 logaddexp, 15 floor_divide, 16 rfloor_divide, 17 remainder (IEEE),
18 rremainder.
Two blobs broadcast by ncnn's rules (cpu_fallback/binary.py): a lower-rank operand
lines up with the OUTER axes of the other, e.g. a (c,) vector is per channel.
Domain edges follow ncnn's vectorised kernels: x / 0 is nan, pow of a base <= 0 is 2.4e38.
"""

from vkncnn.cpu_fallback import binary
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("BinaryOp")
class BinaryOp(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.op_type = pd.get(0, 0)
        self.with_scalar = pd.get(1, 0)
        self.b = pd.get(2, 0.0)
        binary.check_op_type(self.op_type)
        if self.with_scalar:
            self.one_blob_only = True
            self.support_inplace = True
        return 0

    def forward_cpu(self, bottoms, opt):
        if self.with_scalar:
            return [binary.binary_op_scalar(bottoms[0], self.b, self.op_type)]
        if len(bottoms) != 2:
            raise ShapeError(f"BinaryOp without with_scalar takes 2 inputs, got {len(bottoms)}")
        return [binary.binary_op(bottoms[0], bottoms[1], self.op_type)]

    # -- GPU: binaryop.comp, flat for same-shape operands and scalars, else broadcast --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = None
        if self.vkdev is not None:
            self.gpu_op = elementwise.BinaryGpu(self.vkdev, opt, self.op_type, self.with_scalar, self.b)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        if self.with_scalar:
            return [self.gpu_op.forward_scalar(bottoms[0], cmd, opt)]
        if len(bottoms) != 2:
            raise ShapeError(f"BinaryOp without with_scalar takes 2 inputs, got {len(bottoms)}")
        return [self.gpu_op.forward(bottoms[0], bottoms[1], cmd, opt)]
