"""Gemm: y = (op(A) @ op(B) + beta * C) * alpha, op = optional transpose.

A, B and C are each either a constant stored in the .bin (constantA/B/C with
constantM/N/K) or the next input blob, in the order A, B, C. A is (M, K) or, with
transA, (K, M); B is (K, N) or, with transB, (N, K) (PyTorch Linear's layout).
A 3-D operand (c, 1, w) is read as the 2-D matrix (c, w), as ncnn does.

C broadcasts per constant_broadcast_type_C (constant C) or by its shape (blob C):
scalar, [M], [M, 1], [M, N], [N]/[1, N]; -1 means no C.
The output is (M, N); output_transpose gives (N, M); output_N1M makes it 3-D with a
middle axis of 1. output_elempack / output_elemtype only steer ncnn's storage
(fp32 here) and TILE_M/N/K its blocking; they are read and have no effect.

int8_scale_term (18): a constant A or B may be stored int8, followed by its scales (A
one per row, B one); every other operand is quantized on the fly, and the product runs
in exact int32 sums (cpu_fallback/gemm_int8.py).
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import gemm, gemm_int8
from vkncnn.errors import GpuError, ParamError, ShapeError, WeightError
from vkncnn.gpu.ops.dispatch_options import arithmetic_fp16, as_pack1, out_elempack, storage_is_fp16
from vkncnn.gpu.ops.matrix_product import (
    GEMV_ROPE_BINDINGS,
    GemmOperand,
    gemv_folds_fit,
    gemv_merge_fits,
    record_gemm,
    record_gemv,
    upload_row_slices,
)
from vkncnn.gpu.ops.split_records import SplitRecords
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("Gemm")
class Gemm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.alpha = pd.get(0, 1.0)
        self.beta = pd.get(1, 1.0)
        self.transA = pd.get(2, 0)
        self.transB = pd.get(3, 0)
        self.constantA = pd.get(4, 0)
        self.constantB = pd.get(5, 0)
        self.constantC = pd.get(6, 0)
        self.constantM = pd.get(7, 0)
        self.constantN = pd.get(8, 0)
        self.constantK = pd.get(9, 0)
        self.constant_broadcast_type_C = pd.get(10, 0)
        self.output_N1M = pd.get(11, 0)
        self.output_elempack = pd.get(12, 0)
        self.output_elemtype = pd.get(13, 0)
        self.output_transpose = pd.get(14, 0)
        self.int8_scale_term = pd.get(18, 0)
        self.constant_TILE_M = pd.get(20, 0)
        self.constant_TILE_N = pd.get(21, 0)
        self.constant_TILE_K = pd.get(22, 0)
        if self.int8_scale_term in (4, 5, 6) or self.int8_scale_term >= 400:
            # 4-6 ncnn refuses; 400+ are its weight block quantizations (4/6/8-bit blocks)
            raise ParamError(f"Gemm quantize_term (18={self.int8_scale_term}) is not supported")
        if self.int8_scale_term:
            self.support_vulkan = False  # int8 products run on numpy (exact integer sums)
        if self.constantA and (self.constantM <= 0 or self.constantK <= 0):
            raise ParamError("constantM (7) and constantK (9) must be positive when constantA (4) is set")
        if self.constantB and (self.constantN <= 0 or self.constantK <= 0):
            raise ParamError("constantN (8) and constantK (9) must be positive when constantB (5) is set")
        if self.constantC and not -1 <= self.constant_broadcast_type_C <= 4:
            raise ParamError(f"constant_broadcast_type_C (10) must be -1..4, got {self.constant_broadcast_type_C}")
        # ncnn: exactly one operand comes from a blob
        self.one_blob_only = sum(bool(v) for v in (self.constantA, self.constantB, self.constantC)) == 2
        return 0

    def load_model(self, mb) -> int:
        m, n, k = self.constantM, self.constantN, self.constantK
        self.A_data = self.B_data = self.C_data = None
        if self.constantA:
            self.A_data = self._float(mb.load(k, m, 0) if not self.transA else mb.load(m, k, 0), "A")
        if self.constantB:
            self.B_data = self._float(mb.load(n, k, 0) if not self.transB else mb.load(k, n, 0), "B")
        if self.constantC and self.constant_broadcast_type_C != -1:
            shape = {0: (1,), 1: (m,), 2: (1, m), 3: (n, m), 4: (n, 1)}[self.constant_broadcast_type_C]
            c = self._float(mb.load(*shape, 0), "C")
            self.C_data = gemm.gemm_broadcast_c(c, self.constant_broadcast_type_C, m, n)
        self.A_int8_scales = self.B_int8_scale = None
        if self.int8_scale_term:
            # an int8-stored constant comes with its scales: A one per row, B one in all
            if self.constantA:
                self.A_int8_scales = mb.load(m, 1)
            if self.constantB:
                self.B_int8_scale = np.float32(mb.load(1, 1)[0])
        # operands as used by the product, laid out once
        self.A_mat = None if self.A_data is None else (self.A_data.T if self.transA else self.A_data)
        self.B_mat = None if self.B_data is None else (self.B_data.T if self.transB else self.B_data)
        return 0

    def _float(self, a: np.ndarray, name: str) -> np.ndarray:
        if a.dtype == np.int8 and not (self.int8_scale_term and name in "AB"):
            raise WeightError(f"Gemm constant {name} is int8 but int8_scale_term (18) is 0")
        return a

    def _check_inputs(self, bottoms) -> None:
        need = (not self.constantA) + (not self.constantB)
        if len(bottoms) < need:
            raise ShapeError(f"Gemm with constantA={self.constantA} constantB={self.constantB} takes at least "
                             f"{need} inputs, got {len(bottoms)}")

    def forward_cpu(self, bottoms, opt):
        self._check_inputs(bottoms)
        blobs = list(bottoms)
        a = self.A_mat if self.constantA else self._matrix(blobs.pop(0), "A", self.transA)
        b = self.B_mat if self.constantB else self._matrix(blobs.pop(0), "B", self.transB)
        # constantM/N make the (M, N) output as large as they like from a few bytes of weights
        check_alloc(opt, (a.shape[0], b.shape[1]), 4, "the product")
        if self.int8_scale_term and getattr(opt, "use_int8_inference", True):
            return self._forward_int8(a, b, blobs)
        m, k = a.shape
        if b.shape[0] != k:
            raise ShapeError(f"Gemm: A is {m}x{k} but B is {b.shape[0]}x{b.shape[1]} (after transA/transB)")
        c = self._c_matrix(blobs, m, b.shape[1])
        out = gemm.gemm(a.astype(np.float32, copy=False), b.astype(np.float32, copy=False), c,
                        self.alpha, self.beta)
        return [self._shape_output(out)]

    def _c_matrix(self, blobs, m: int, n: int):
        """C broadcast to (m, n), or None: the constant, else the next blob, else none."""
        if self.constantC:
            c = self.C_data
            if c is not None and (c.shape[0] not in (1, m) or c.shape[1] not in (1, n)):
                raise ShapeError(f"Gemm constant C {c.shape} does not broadcast against the {m}x{n} output")
            return c
        if blobs:
            blob_c = np.asarray(blobs.pop(0), np.float32)
            return gemm.gemm_broadcast_c(blob_c, gemm.gemm_infer_c_type(blob_c, m, n), m, n)
        return None

    def _forward_int8(self, a, b, blobs):
        """int8_scale_term: int8 operands (an int8-stored constant with its scales, anything
        else quantized on the fly) and exact int32 sums (cpu_fallback/gemm_int8.py)."""
        m, k = a.shape
        if b.shape[0] != k:
            raise ShapeError(f"Gemm: A is {m}x{k} but B is {b.shape[0]}x{b.shape[1]} (after transA/transB)")
        if a.dtype == np.int8:
            aq, sa = a, self.A_int8_scales
        else:
            aq, sa = gemm_int8.quantize_rows(np.asarray(a, np.float32))
        if b.dtype == np.int8:
            bq, sb = b, self.B_int8_scale
        else:
            bq, sb = gemm_int8.quantize_whole(np.asarray(b, np.float32))
        c = self._c_matrix(blobs, m, b.shape[1])
        return [self._shape_output(gemm_int8.gemm_int8(aq, sa, bq, sb, c, self.alpha, self.beta))]

    def _shape_output(self, out):
        if self.output_transpose:
            out = out.T
        out = np.ascontiguousarray(out)
        if self.output_N1M:
            out = out.reshape(out.shape[0], 1, out.shape[1])
        return out

    # -- GPU -----------------------------------------------------------------------------------
    def upload_model(self, cmd, opt) -> int:
        """Constant operands as stored (B keeps its transB layout: strides do the transpose).

        Constant weight rows (transB, a Linear layer) larger than the device's storage-buffer
        range go up in slices of rows, one dispatch each (an LLM's proj_out: 151936 x 896
        weights are 272 MB at fp16, phones and lavapipe bind at most 128 MiB)."""
        self.A_gpu = cmd.record_upload(np.ascontiguousarray(self.A_mat), opt) if self.A_data is not None else None
        self.B_gpu, self.B_slices = None, []
        if self.B_data is not None:
            b = np.ascontiguousarray(self.B_data)
            if self.transB:
                self.B_slices = upload_row_slices(cmd, opt, b, use_fp16_storage(opt, self.vkdev))
            else:
                self.B_slices = [(0, cmd.record_upload(b, opt))]
            self.B_gpu = self.B_slices[0][1] if len(self.B_slices) == 1 else None
        self.C_gpu = cmd.record_upload(np.ascontiguousarray(self.C_data), opt) if self.C_data is not None else None
        return 0

    def accepts_residual(self) -> bool:
        """Can the GPU planner fold a following sum into this layer's dispatch? Only a linear
        layer without C (its matrix-vector kernel then adds the summand where it adds a bias);
        whether this inference takes that kernel is known when it records (takes_residual)."""
        return (self.constantB and self.transB and not self.constantA and not self.transA
                and not self.int8_scale_term and self.C_data is None and self.alpha == 1.0
                and not (self.output_transpose or self.output_N1M) and not self._c_from_blob())

    def _c_from_blob(self) -> bool:
        """Does C come from an input blob (constantC off, and a bottom after A's and B's)?"""
        return not self.constantC and len(self.bottoms) > (not self.constantA) + (not self.constantB)

    def takes_residual(self, bottoms, residual) -> bool:
        """Record time: is this a one-row product (the matrix-vector kernel) whose output has
        the summand's shape, so that the summand can stand in for its bias?"""
        if not self.accepts_residual() or not bottoms:
            return False
        rows, k, _ = self._gpu_matrix(bottoms[0], "A")
        n = self.B_mat.shape[1]
        return (rows == 1 and self._one_row_of_weights(1, k, None)
                and tuple(residual.numpy_shape()) == (1, n) and residual.elempack == 1)

    def takes_prenorm(self, x, norm) -> bool:
        """Record time: can RMSNorm `norm` of the one-row input x (the norm's input, a (k,) or
        (1, k) blob) fold into this product, the matrix-vector kernel normalising x itself?"""
        shape = tuple(x.numpy_shape())
        k = shape[-1] if shape else 0
        return (len(self.bottoms) == 1 and shape in ((k,), (1, k)) and k == norm.affine_size > 0
                and gemv_folds_fit(self.vkdev)
                and self.B_data is not None and self.B_mat.shape[0] == k
                and self._one_row_of_weights(1, k, None if self.C_data is None else self.C_gpu))

    def _takes_one_row(self, x, prenorm=None) -> bool:
        """Record time: does the matrix-vector kernel compute this product of the one-row
        input x (one input, constant weight rows, C absent or a per-column bias), reading
        x as the input of `prenorm`, an RMSNorm it normalises, where given?"""
        if prenorm is not None:
            return self.takes_prenorm(x, prenorm)
        if len(self.bottoms) != 1 or self.B_data is None:
            return False
        rows, k, _ = self._gpu_matrix(x, "A")
        return rows == 1 and self._one_row_of_weights(1, k, None if self.C_data is None else self.C_gpu)

    def takes_gated(self, x, up, x_up, prenorm=None) -> bool:
        """Record time: can Gemm `up` (reading x_up) fold into this one (reading x), the
        kernel giving act(this) * up, as a following BinaryOp mul would? Both one-row
        products without C, of the same sizes, their weights in one slice each; with
        `prenorm` both read that norm's input."""
        return (isinstance(up, Gemm) and self.C_data is None and up.C_data is None and gemv_folds_fit(self.vkdev)
                and self._takes_one_row(x, prenorm) and up._takes_one_row(x_up, prenorm)
                and self.B_mat.shape == up.B_mat.shape and len(self.B_slices) == 1 and len(up.B_slices) == 1)

    def rope_source_shape(self, x):
        """The shape of this layer's output that a RoPE folded after it sees: one row of its
        outputs (None without constant weights)."""
        return (1, self.B_mat.shape[1]) if self.B_data is not None else None

    def takes_rope(self, x, dim: int, cos, sin, prenorm=None) -> bool:
        """Record time: can a one-token RotaryEmbed over heads of `dim` of this product's
        output fold into it (x: its input; cos, sin: (1, dim / 2) pack1 blobs)? The matrix-
        vector kernel then computes each rotation pair's rows in one workgroup."""
        return (self._takes_one_row(x, prenorm) and len(self.B_slices) == 1 and dim >= 2 and dim % 2 == 0
                and self.B_mat.shape[1] % dim == 0
                and gemv_folds_fit(self.vkdev, GEMV_ROPE_BINDINGS)
                and all(tuple(t.numpy_shape()) == (1, dim // 2) and t.elempack == 1 for t in (cos, sin)))

    def takes_split_merge(self, k: int) -> bool:
        """Record time: can this product read a decode step's attention output of k values as
        its unmerged splits (a SplitRecords), merging them as it loads its input? A one-row
        product of constant weight rows in one slice, k within the kernel's merge limits."""
        return (len(self.bottoms) == 1 and self.B_data is not None and len(self.B_slices) == 1
                and self.B_mat.shape[0] == k and gemv_merge_fits(self.vkdev, k)
                and self._one_row_of_weights(1, k, None if self.C_data is None else self.C_gpu))

    def takes_scale(self, bottoms) -> bool:
        """Record time: can a following BinaryOp scaling the output by a constant fold into
        this product? A one-row product whose sum the folding may add as its bias
        (accepts_residual): the matrix-vector kernel scales the product before it."""
        return self.accepts_residual() and bool(bottoms) and self._takes_one_row(bottoms[0])

    # a following activation layer (ReLU, Swish) may fold into every kernel's epilogue
    takes_gpu_activation = True

    def forward_gpu(self, bottoms, cmd, opt, residual=None, activation=None, prenorm=None, gated=None, rope=None,
                    scale=None):
        """`residual` (a (1, N) blob, takes_residual) is added to the one-row product before
        `activation` ((type, p0, p1), a folded activation layer's), in the same dispatch.
        `prenorm` (an RMSNorm layer, takes_prenorm): the input is that norm's input, which
        the kernel normalises as it reads it. `gated` ((Gemm, its input), takes_gated): the
        output is act(this product) times that one's. `rope` ((1 or 2, dim, cos, sin),
        takes_rope): the output rotated as a one-token RotaryEmbed (interleaved: 2) would.
        `scale` (a float, takes_scale): the product times it, before the residual."""
        self._check_inputs(bottoms)
        act = tuple(activation) if activation is not None else (0, 0.0, 0.0)
        if residual is not None and not self.takes_residual(bottoms, residual):
            raise GpuError(f"Gemm {self.name!r}: this product cannot take a residual sum")
        if prenorm is not None and not self.takes_prenorm(bottoms[0], prenorm):
            raise GpuError(f"Gemm {self.name!r}: this product cannot take the RMSNorm before it")
        if gated is not None and not self.takes_gated(bottoms[0], *gated, prenorm):
            raise GpuError(f"Gemm {self.name!r}: this product cannot take Gemm {gated[0].name!r} as its gate")
        if rope is not None and (activation is not None or residual is not None or gated is not None
                                 or not self.takes_rope(bottoms[0], *rope[1:], prenorm)):
            raise GpuError(f"Gemm {self.name!r}: this product cannot take the RoPE after it")
        if scale is not None and (gated is not None or rope is not None or not self.takes_scale(bottoms)):
            raise GpuError(f"Gemm {self.name!r}: this product cannot take the scaling after it")
        blobs = [as_pack1(x, cmd, opt) for x in bottoms]
        merge = blobs and isinstance(blobs[0], SplitRecords)
        if merge and (prenorm is not None or gated is not None or rope is not None
                      or not self.takes_split_merge(blobs[0].row_length)):
            raise GpuError(f"Gemm {self.name!r}: this product cannot merge the attention's splits it reads")
        if merge:
            fp16 = blobs[0].fp16
        else:
            fp16 = storage_is_fp16(blobs[0]) if blobs else self.B_slices[0][1].scalar_size() == 2
        # A(m, k) and B(k, n) as operands of shaders/gemm.comp, with their sizes
        if self.constantA:
            m, k = self.A_mat.shape
            a = GemmOperand(self.A_gpu, k, 1)
        else:
            rows, cols, mat = self._gpu_matrix(blobs.pop(0), "A")
            m, k = (cols, rows) if self.transA else (rows, cols)
            a = GemmOperand(mat, 1, cols) if self.transA else GemmOperand(mat, cols, 1)
        if self.constantB:
            kb, n = self.B_mat.shape
            b = GemmOperand(self.B_gpu, 1, kb) if self.transB else GemmOperand(self.B_gpu, n, 1)
            if len(self.B_slices) > 1 and (self.output_transpose or self.output_N1M):
                raise GpuError(f"Gemm {self.name!r}: its {n} x {kb} weights exceed the device's storage-buffer "
                               f"range and are cut into slices, which a transposed or N1M output cannot take")
        else:
            rows, cols, mat = self._gpu_matrix(blobs.pop(0), "B")
            kb, n = (cols, rows) if self.transB else (rows, cols)
            b = GemmOperand(mat, 1, cols) if self.transB else GemmOperand(mat, cols, 1)
        if kb != k:
            raise ShapeError(f"Gemm: A is {m}x{k} but B is {kb}x{n} (after transA/transB)")
        c = None
        if self.constantC:
            if self.C_data is not None:
                cr, cc = self.C_data.shape
                if cr not in (1, m) or cc not in (1, n):
                    raise ShapeError(f"Gemm constant C {self.C_data.shape} does not broadcast against the "
                                     f"{m}x{n} output")
                c = GemmOperand(self.C_gpu, cc if cr > 1 else 0, 1 if cc > 1 else 0)
        elif blobs:
            blob_c = blobs.pop(0)
            shape = blob_c.numpy_shape()
            kind = gemm.gemm_infer_c_type(np.broadcast_to(np.float32(0), shape), m, n)
            size = int(np.prod(shape))
            need = {0: 1, 1: m, 2: m, 3: m * n, 4: n}[kind]
            if size < need:
                raise ShapeError(f"Gemm C has {size} values, broadcast type {kind} needs {need}")
            c = GemmOperand(blob_c, *{0: (0, 0), 1: (1, 0), 2: (1, 0), 3: (n, 1), 4: (0, 1)}[kind])
        if self._one_row_of_weights(m, k, c):
            # a decode step's product: one row times constant weight rows, read once at memory
            # speed by the matrix-vector kernel (C, where present, is the per-column bias)
            top = VkMat.for_numpy_shape((1, n), 1, 2 if fp16 else 4, cmd.blob_allocator(opt))
            # a folded residual sum has no C to share the bias slot with (accepts_residual)
            bias = c.mat if c is not None else residual
            norm = (prenorm.eps, prenorm.gamma_gpu) if prenorm is not None else None
            up = None
            if gated is not None:  # one slice each (takes_gated); with prenorm both read a.mat
                up = (gated[0].B_slices[0][1], None if norm else as_pack1(gated[1], cmd, opt))
            for n0, weight in self.B_slices:
                record_gemv(self, cmd, fp16, a.mat, weight, bias, top, n0, k, activation=act, prenorm=norm, up=up,
                            rope=rope, scale=1.0 if scale is None else scale, opt=opt)
            return [top]
        if self.output_transpose:
            # out^T = B^T A^T: swap the operands' roles, so the output's rows are always m
            a, b, m, n = GemmOperand(b.mat, b.s_col, b.s_row), GemmOperand(a.mat, a.s_col, a.s_row), n, m
            if c is not None:
                c = GemmOperand(c.mat, c.s_col, c.s_row)
        ep = out_elempack(m, opt)
        scalar = 2 if fp16 else 4
        shape = (m, 1, n) if self.output_N1M else (m, n)
        check_alloc(opt, shape, scalar, "the product")
        top = VkMat.for_numpy_shape(shape, ep, scalar, cmd.blob_allocator(opt))
        out = GemmOperand(top, n * ep, ep, elempack=ep)
        arith = arithmetic_fp16(opt, fp16)
        if len(self.B_slices) > 1:  # weight rows in slices: each gives a block of output columns
            for n0, weight in self.B_slices:
                cols = weight.numpy_shape()[0]
                c_cols = c.from_column(n0) if c is not None else None
                record_gemm(self, cmd, fp16, m, cols, k, a, GemmOperand(weight, 1, k), c_cols, out.from_column(n0),
                            alpha=self.alpha, beta=self.beta, activation=act, fp16_arithmetic=arith)
            return [top]
        record_gemm(self, cmd, fp16, m, n, k, a, b, c, out, alpha=self.alpha, beta=self.beta, activation=act,
                    fp16_arithmetic=arith)
        return [top]

    def _one_row_of_weights(self, m: int, k: int, c) -> bool:
        """Is this y = x W^T (+ bias) of one row x and constant weight rows W (transB), the
        form innerproduct_gemv.comp computes: k % 4 == 0, no scaling, C absent or a row of n?"""
        if m != 1 or self.transA or self.constantA or self.int8_scale_term or not (self.constantB and self.transB):
            return False
        if self.output_transpose or self.output_N1M or k % 4 or self.alpha != 1.0:
            return False
        return c is None or (self.C_data is not None and self.C_data.shape[0] == 1 and self.beta == 1.0
                             and self.C_data.shape[1] == self.B_data.shape[0] > 1)

    @staticmethod
    def _gpu_matrix(x, name: str):
        """(rows, cols, pack1 VkMat) of a blob read as ncnn's 2-D matrix (see _matrix); an
        attention's SplitRecords as the one row they stand for."""
        if isinstance(x, SplitRecords):
            return 1, x.row_length, x
        shape = x.numpy_shape()
        if len(shape) == 1:
            return 1, shape[0], x
        if len(shape) == 3 and shape[1] == 1:
            return shape[0], shape[2], x
        if len(shape) != 2:
            raise ShapeError(f"Gemm operand {name} must be 2-D (or 3-D with h == 1), got {shape}")
        return shape[0], shape[1], x

    @staticmethod
    def _matrix(x: np.ndarray, name: str, transposed: int) -> np.ndarray:
        """A blob as the 2-D matrix ncnn reads: (h, w), 1-D as one row, (c, 1, w) as (c, w)."""
        if x.ndim == 1:
            x = x.reshape(1, -1)
        elif x.ndim == 3 and x.shape[1] == 1:
            x = x[:, 0, :]
        elif x.ndim != 2:
            raise ShapeError(f"Gemm operand {name} must be 2-D (or 3-D with h == 1), got {x.shape}")
        return x.T if transposed else x

