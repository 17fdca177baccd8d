"""MatMul: y = A @ B (B transposed first when transB), numpy.matmul semantics.

Both operands are blobs of 1-4 dims. 1-D x 1-D is a dot product (shape (1,));
a 1-D A is a row vector and a 1-D B a column vector, their axis dropped from the
result; 2-D x 2-D is a plain product; 3-D/4-D operands batch over their leading
axes, a size-1 (or missing) batch axis broadcasting against the other operand.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import gemm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops.dispatch_options import arithmetic_fp16, as_pack1, out_elempack, storage_is_fp16
from vkncnn.gpu.ops.matrix_product import GemmOperand, record_gemm
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.layer import Layer, register_layer


@register_layer("MatMul")
class MatMul(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.transB = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) != 2:
            raise ShapeError(f"MatMul takes 2 inputs, got {len(bottoms)}")
        a, b = (np.asarray(x, np.float32) for x in bottoms)
        return [np.ascontiguousarray(gemm.matmul(a, b, bool(self.transB)))]

    # -- GPU -----------------------------------------------------------------------------------
    def forward_gpu(self, bottoms, cmd, opt):
        """One batched dispatch of shaders/gemm.comp; the batch axes broadcast through zero strides."""
        if len(bottoms) != 2:
            raise ShapeError(f"MatMul takes 2 inputs, got {len(bottoms)}")
        a_mat, b_mat = (as_pack1(x, cmd, opt) for x in bottoms)
        sa, sb = a_mat.numpy_shape(), b_mat.numpy_shape()
        fp16 = storage_is_fp16(a_mat)
        if len(sa) == 1 and len(sb) == 1:
            if sa[0] != sb[0]:
                raise ShapeError(f"MatMul dot product of lengths {sa[0]} and {sb[0]}")
            top = VkMat.for_numpy_shape((1,), 1, a_mat.scalar_size(), cmd.blob_allocator(opt))
            record_gemm(self, cmd, fp16, 1, 1, sa[0], GemmOperand(a_mat, 0, 1), GemmOperand(b_mat, 1, 0),
                        None, GemmOperand(top, 0, 0))
            return [top]
        # A (..., m, k): a 1-D A is one row; B (..., k, n) or (..., n, k) with transB; 1-D B a column
        m, k = (1, sa[0]) if len(sa) == 1 else sa[-2:]
        a_rows = (k, 1)
        if len(sb) == 1:
            kb, n, b_rows = sb[0], 1, (1, 0)
        elif self.transB:
            n, kb = sb[-2:]
            b_rows = (1, kb)
        else:
            kb, n = sb[-2:]
            b_rows = (n, 1)
        if k != kb:
            raise ShapeError(f"MatMul inner dimensions differ: A {sa} x B {sb}{' (transB)' if self.transB else ''}")
        batch_a, batch_b = tuple(sa[:-2]), tuple(sb[:-2])
        try:
            batch = np.broadcast_shapes(batch_a, batch_b)
        except ValueError as e:
            raise ShapeError(f"MatMul batch dimensions do not broadcast: A {sa} x B {sb}") from e
        out_shape = batch + ((m,) if len(sa) > 1 else ()) + ((n,) if len(sb) > 1 else ())
        bh, bl = (1,) * (2 - len(batch)) + batch
        ep = out_elempack(m, opt) if len(out_shape) == 2 and len(sa) > 1 and len(sb) > 1 else 1
        if len(out_shape) == 1:
            ep = out_elempack(out_shape[0], opt)  # 1-D: the same bytes in either packing
        top = VkMat.for_numpy_shape(out_shape, ep, a_mat.scalar_size(), cmd.blob_allocator(opt))
        a = GemmOperand(a_mat, *a_rows, *_batch_strides(batch_a, m * k))
        b = GemmOperand(b_mat, *b_rows, *_batch_strides(batch_b, k * n))
        if len(out_shape) == 2 and ep == 4:
            out = GemmOperand(top, n * 4, 4, elempack=4)
        else:
            out = GemmOperand(top, n, 1, bl * m * n, m * n)
        record_gemm(self, cmd, fp16, m, n, k, a, b, None, out, batch=bh * bl, batch_inner=bl,
                    fp16_arithmetic=arithmetic_fp16(opt, fp16))
        return [top]


def _batch_strides(batch: tuple, matrix: int) -> tuple:
    """(high, low) batch-axis strides, in scalars, of a dense operand; 0 where it broadcasts."""
    hi, lo = (1,) * (2 - len(batch)) + tuple(batch)
    return (lo * matrix if hi > 1 else 0), (matrix if lo > 1 else 0)
