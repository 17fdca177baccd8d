"""Cast: convert between element types 1 fp32, 2 fp16, 3 int8, 4 bf16.

Blobs here are always float32 arrays, so a cast yields the values the target type
can hold: fp32 -> fp16 rounds to the nearest fp16 (ties to even, overflow to inf, as
F16C does), fp32 -> bf16 rounds to the nearest bf16 (ties to even, subnormals to zero,
as x86 ncnn's vcvtneps2bf16 path does). Casting back to fp32 is exact.
ncnn implements 1->2, 2->1, 1->4, 4->1, 3->1 and any type to itself; the other pairs
leave its output uninitialised, so we refuse them.
"""

import numpy as np

from vkncnn.cpu_fallback.activation import FLT_MIN
from vkncnn.errors import ParamError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import Layer, register_layer

FP32, FP16, INT8, BF16 = 1, 2, 3, 4
SUPPORTED = {(FP32, FP16), (FP16, FP32), (FP32, BF16), (BF16, FP32), (INT8, FP32)}


def round_to_fp16(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest bfloat16 (ties to even), returned as float32.

    Subnormal inputs become signed zeros, as the hardware conversion (vcvtneps2bf16)
    that ncnn uses on x86 treats them.
    """
    x = np.asarray(x, np.float32)
    x = np.where(np.abs(x) < FLT_MIN, np.copysign(np.float32(0), x), x)
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    lsb = (bits >> 16) & 1
    rounded = ((bits.astype(np.uint64) + 0x7FFF + lsb) & 0xFFFF0000).astype(np.uint32)
    # nan must stay nan (rounding could carry its payload into inf); keep it quiet
    rounded = np.where(np.isnan(x), (bits & 0xFFFF0000) | 0x00400000, rounded).astype(np.uint32)
    return rounded.view(np.float32)


def as_float32(x: np.ndarray) -> np.ndarray:
    return np.array(x, dtype=np.float32)


@register_layer("Cast")
class Cast(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.type_from = pd.get(0, 0)
        self.type_to = pd.get(1, 0)
        # a pair ncnn does not convert stays on the numpy path, which raises the error
        self.support_vulkan = self.type_from == self.type_to or (self.type_from, self.type_to) in SUPPORTED
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        pair = (self.type_from, self.type_to)
        if self.type_from == self.type_to:
            return [x]
        if pair not in SUPPORTED:
            raise ParamError(f"Cast from type {self.type_from} to {self.type_to} is not supported "
                             "(ncnn converts 1<->2, 1<->4 and 3->1; 1 fp32, 2 fp16, 3 int8, 4 bf16)")
        if self.type_to == FP16 or self.type_from == FP16:
            return [round_to_fp16(x)]  # fp16 -> fp32 is exact; re-rounding keeps it so
        if self.type_to == BF16 or self.type_from == BF16:
            return [round_to_bf16(x)]
        return [as_float32(x)]  # int8 -> fp32: the values are already integers

    # -- GPU: unaryop.comp rounds through fp16 / bf16 (a copy for the exact casts) --
    def gpu_rounding(self) -> int:
        if self.type_from == self.type_to:
            return elementwise.COPY
        if FP16 in (self.type_from, self.type_to):
            return elementwise.ROUND_FP16
        if BF16 in (self.type_from, self.type_to):
            return elementwise.ROUND_BF16
        return elementwise.COPY

    def create_pipeline(self, opt) -> int:
        op = self.gpu_rounding()
        self.gpu_op = None if op == elementwise.COPY else elementwise.unary_gpu(self, opt, op)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        if self.gpu_op is None:
            return [cmd.record_clone(bottoms[0], opt)]  # a new blob: the input is never the output
        return [self.gpu_op.forward(bottoms[0], cmd, opt)]
