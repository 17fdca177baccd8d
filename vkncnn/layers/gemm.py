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
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import gemm
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.vkmat import VkMat
from vkncnn.layer import Layer, register_layer


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
        if self.int8_scale_term:
            raise ParamError(f"Gemm int8/block quantization (18={self.int8_scale_term}) is not supported yet")
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
        # operands as used by the product, laid out once
        self.A_mat = None if self.A_data is None else (self.A_data.T if self.transA else self.A_data)
        self.B_mat = None if self.B_data is None else (self.B_data.T if self.transB else self.B_data)
        return 0

    @staticmethod
    def _float(a: np.ndarray, name: str) -> np.ndarray:
        if a.dtype == np.int8:
            raise WeightError(f"Gemm constant {name} is int8 but int8_scale_term (18) is 0")
        return a

    def forward_cpu(self, bottoms, opt):
        blobs = list(bottoms)
        a = self.A_mat if self.constantA else self._matrix(blobs.pop(0), "A", self.transA)
        b = self.B_mat if self.constantB else self._matrix(blobs.pop(0), "B", self.transB)
        m, k = a.shape
        if b.shape[0] != k:
            raise ShapeError(f"Gemm: A is {m}x{k} but B is {b.shape[0]}x{b.shape[1]} (after transA/transB)")
        n = b.shape[1]
        c = None
        if self.constantC:
            c = self.C_data
            if c is not None and (c.shape[0] not in (1, m) or c.shape[1] not in (1, n)):
                raise ShapeError(f"Gemm constant C {c.shape} does not broadcast against the {m}x{n} output")
        elif blobs:
            blob_c = np.asarray(blobs.pop(0), np.float32)
            c = gemm.gemm_broadcast_c(blob_c, gemm.gemm_infer_c_type(blob_c, m, n), m, n)
        out = gemm.gemm(a.astype(np.float32, copy=False), b.astype(np.float32, copy=False), c,
                        self.alpha, self.beta)
        if self.output_transpose:
            out = out.T
        out = np.ascontiguousarray(out)
        if self.output_N1M:
            out = out.reshape(out.shape[0], 1, out.shape[1])
        return [out]

    # -- GPU -----------------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        return 0  # pipelines are specialised to the shapes: made when a shape is first recorded

    def destroy_pipeline(self, opt) -> int:
        forget_pipelines(self)
        return 0

    def upload_model(self, cmd, opt) -> int:
        """Constant operands as stored (B keeps its transB layout: strides do the transpose)."""
        self.A_gpu = cmd.record_upload(np.ascontiguousarray(self.A_mat), opt) if self.A_data is not None else None
        self.B_gpu = cmd.record_upload(np.ascontiguousarray(self.B_data), opt) if self.B_data is not None else None
        self.C_gpu = cmd.record_upload(np.ascontiguousarray(self.C_data), opt) if self.C_data is not None else None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        blobs = [as_pack1(x, cmd, opt) for x in bottoms]
        fp16 = storage_is_fp16(blobs[0]) if blobs else self.B_gpu.scalar_size() == 2
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
        if self.output_transpose:
            # out^T = B^T A^T: swap the operands' roles, so the output's rows are always m
            a, b, m, n = GemmOperand(b.mat, b.s_col, b.s_row), GemmOperand(a.mat, a.s_col, a.s_row), n, m
            if c is not None:
                c = GemmOperand(c.mat, c.s_col, c.s_row)
        ep = out_elempack(m, opt)
        scalar = 2 if fp16 else 4
        shape = (m, 1, n) if self.output_N1M else (m, n)
        top = VkMat.for_numpy_shape(shape, ep, scalar, cmd.blob_allocator(opt))
        out = GemmOperand(top, n * ep, ep, elempack=ep)
        record_gemm(self, cmd, fp16, m, n, k, a, b, c, out, alpha=self.alpha, beta=self.beta)
        return [top]

    @staticmethod
    def _gpu_matrix(x, name: str):
        """(rows, cols, pack1 VkMat) of a blob read as ncnn's 2-D matrix (see _matrix)."""
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


# -- GPU path --------------------------------------------------------------------------------
# The helpers below drive shaders/gemm.comp, the strided batched matrix product that
# InnerProduct, Gemm, MatMul and MultiHeadAttention all record (see that shader for the
# addressing). They live here, next to the layer the shader is named after.


def activation_specs(activation_type: int, params) -> list:
    """(type, p0, p1) for shaders/include/activation.comp, with ncnn's defaults filled in."""
    p = [float(v) for v in np.asarray(params if params is not None else [], np.float32).ravel()]
    p0 = p1 = 0.0
    if activation_type == 2:
        p0 = p[0] if p else 0.0
    elif activation_type == 3:
        p0 = p[0] if len(p) > 0 else -np.inf
        p1 = p[1] if len(p) > 1 else np.inf
    elif activation_type == 6:
        p0 = p[0] if len(p) > 0 else 0.2
        p1 = p[1] if len(p) > 1 else 0.5
    return [int(activation_type), p0, p1]


def cached_pipeline(layer, shader: str, fp16: bool, specs: list, local: tuple, defines: dict | None = None):
    """A Pipeline for (shader, storage precision, specializations, local size), made once per layer.

    Layers create their pipelines when they first record a shape (the shapes go into the
    specialization constants, so index arithmetic folds to constants); the device caches
    the Vulkan objects, so equal requests from several layers share them.
    """
    from types import SimpleNamespace

    from vkncnn.gpu.pipeline import Pipeline

    cache = layer.__dict__.setdefault("_gpu_pipelines", {})
    key = (shader, fp16, tuple(specs), tuple(local), tuple(sorted((defines or {}).items())))
    pipeline = cache.get(key)
    if pipeline is None:
        pipeline = Pipeline(layer.vkdev)
        pipeline.set_local_size_xyz(*local)
        pipeline.create(shader, SimpleNamespace(use_fp16_storage=fp16), list(specs), defines)
        cache[key] = pipeline
    return pipeline


def forget_pipelines(layer) -> None:
    for pipeline in layer.__dict__.pop("_gpu_pipelines", {}).values():
        pipeline.destroy()


def storage_is_fp16(mat) -> bool:
    """fp16 storage is read off the tensor itself, so a pipeline never reinterprets its data."""
    return mat.scalar_size() == 2


def as_pack1(mat, cmd, opt):
    """`mat` with elempack 1 (a GPU repack when it is pack4)."""
    return mat if mat.elempack == 1 else cmd.vkdev.convert_packing(mat, 1, cmd, opt)


def flat_layout(mat) -> bool:
    """True when the scalars lie in plain C order whatever the elempack (pack4 of one position)."""
    if mat.elempack == 1 or mat.dims == 1:
        return True
    return (mat.w if mat.dims == 2 else mat.cstep) == 1


def out_elempack(rows: int, opt) -> int:
    return 4 if rows % 4 == 0 and getattr(opt, "use_packing_layout", True) else 1


class GemmOperand:
    """One operand of shaders/gemm.comp: a VkMat and its scalar strides.

    For A and the output, s_row / s_col are the m / n (k for A) strides, and a packed
    operand (elempack 4 along m) has s_row = stride of a group of 4 rows. For B they are
    the k / n strides, for C the m / n strides. s_bh / s_bl: the two batch axes.
    """

    __slots__ = ("elempack", "mat", "off", "s_bh", "s_bl", "s_col", "s_row")

    def __init__(self, mat, s_row: int, s_col: int, s_bh: int = 0, s_bl: int = 0, off: int = 0,
                 elempack: int = 1) -> None:
        self.mat, self.s_row, self.s_col = mat, int(s_row), int(s_col)
        self.s_bh, self.s_bl, self.off, self.elempack = int(s_bh), int(s_bl), int(off), int(elempack)

    def push(self) -> list:
        return [self.off, self.s_row, self.s_col, self.s_bh, self.s_bl]


def _pow2_ceil(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def parallel_target(vkdev) -> int:
    """Workgroups a convolution should be cut into to keep the device busy (split-K below
    half of it). A GPU has dozens to hundreds of compute units, each wanting several
    workgroups in flight to hide memory latency (measured on an H200: 1-2 per unit left
    large 3x3 convolutions at a third of the speed of 4+); a CPU implementation (lavapipe)
    runs them on a handful of threads."""
    return 1 if vkdev.info.type() == 3 else 1024


def gemm_tile(m: int, n: int) -> tuple[int, int]:
    """Workgroup (lx, ly) of the tiled kernels (gemm.comp MODE 0, convolution.comp with TM=4):
    the tile is 4*ly rows x 4*lx columns, the largest the product fills, within the shaders'
    shared arrays (4*ly <= 64, 4*lx <= 128) and 256 invocations.

    Large workgroups win: measured on an H200, shrinking tiles to get more workgroups made
    convolutions 2-3x slower; split-K (convolution.py) is what fills a big GPU instead."""
    ly = min(16, _pow2_ceil(-(-m // 4)))
    lx = max(4, min(_pow2_ceil(-(-n // 4)), 32, 256 // ly))
    return lx, ly


def record_gemm(layer, cmd, fp16: bool, m: int, n: int, k: int, a: GemmOperand, b: GemmOperand,
                c: GemmOperand | None, out: GemmOperand, batch: int = 1, batch_inner: int = 1,
                alpha: float = 1.0, beta: float = 1.0, activation=(0, 0.0, 0.0)) -> None:
    """Record out = act((A @ B + beta * C) * alpha) over `batch` products (shaders/gemm.comp)."""
    if m <= 0 or n <= 0 or batch <= 0:
        return
    if k <= 0:  # an empty sum: the product is zero, the epilogue still runs
        a = GemmOperand(a.mat, 0, 0)
    if m <= 4 and b.s_row == 1 and k >= 64:
        mode = 1        # matrix-vector, k contiguous in B: split k over a workgroup
        lx = min(256, max(16, _pow2_ceil(k) // 16))
        local = (lx, 1, 1)
        gx = min(n, 32768)
        global_size = (gx * lx, -(-n // gx), batch)
    elif m <= 4 or m * n <= 256:
        mode = 2        # one invocation per output
        lx = min(64, _pow2_ceil(n))
        local = (lx, max(1, min(64 // lx, _pow2_ceil(m))), 1)
        global_size = (n, m, batch)
    else:
        mode = 0        # tiled through shared memory
        lx, ly = gemm_tile(m, n)
        local = (lx, ly, 1)
        global_size = (-(-n // (4 * lx)) * lx, -(-m // (4 * ly)) * ly, batch)
    specs = list(activation) + [int(c is not None), a.elempack, out.elempack]
    pipeline = cached_pipeline(layer, "gemm", fp16, specs, local, {"MODE": mode})
    c_push = c.push() if c is not None else [0, 0, 0, 0, 0]
    constants = [m, n, k, max(1, batch_inner)] + a.push() + b.push() + c_push + out.push() + \
        [float(alpha), float(beta)]
    cmd.record_pipeline(pipeline, [a.mat, b.mat, c.mat if c is not None else None, out.mat], constants,
                        global_size)
