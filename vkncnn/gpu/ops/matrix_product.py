"""Recording shaders/gemm.comp: the strided batched matrix product that InnerProduct,
Gemm, MatMul and MultiHeadAttention all record (see that shader for the addressing), or
its tensor-core form shaders/gemm_coopmat.comp where the device and the product suit it."""

from __future__ import annotations

import os

from ...errors import GpuError
from ...log import log_kernel
from ..vulkan.pipeline import shader_pipeline
from .dispatch_options import pow2_ceil, workgroup_cap
from .row_reduction import use_subgroups
from .split_records import SplitRecords

# products (batch x m x n x k, fp16 storage) from which gemm_coopmat.comp runs them: the
# convolutions' threshold (conv.TENSOR_CORE_MIN_MACS), not tuned on its own (every product
# of vision_transformer, the model it was measured on, has 2^27 or more)
GEMM_TENSOR_CORE_MIN_MACS = 1 << 25


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

    def from_column(self, n0: int) -> GemmOperand:
        """The same operand seen from column n0 on: where a slice of weight rows writes."""
        return GemmOperand(self.mat, self.s_row, self.s_col, self.s_bh, self.s_bl, self.off + n0 * self.s_col,
                           self.elempack)


def upload_row_slices(cmd, opt, weights, fp16: bool) -> list[tuple[int, object]]:
    """Weight rows (n, k) uploaded as (first row, VkMat) slices, each within the device's
    storage-buffer range (VGG's fc6 and an LLM's proj_out exceed it on many devices, lavapipe
    and phones bind at most 128 MiB); each slice is then one dispatch."""
    limit = cmd.vkdev.info.max_storage_buffer_range()
    row_bytes = weights.shape[1] * (2 if fp16 else 4)
    rows = max(1, min(len(weights), limit // max(row_bytes, 1)))
    return [(n0, cmd.record_upload(weights[n0:n0 + rows], opt)) for n0 in range(0, len(weights), rows)]


def gemm_tile(m: int, n: int, cap: int = 256) -> tuple[int, int]:
    """Workgroup (lx, ly) of the tiled kernels (gemm.comp MODE 0, convolution.comp with TM=4):
    the tile is 4*ly rows x 4*lx columns, the largest the product fills, within the shaders'
    shared arrays (4*ly <= 64, 4*lx <= 128) and 256 invocations (`cap`: fewer where the device
    allows fewer, dispatch_options.workgroup_cap).

    Large workgroups win: shrinking tiles to get more workgroups made convolutions several
    times slower (figures: docs/perf-notes.md, "Tile size of the tiled kernels"); split-K
    (convolution.py) is what fills a big GPU instead."""
    ly = min(16, pow2_ceil(-(-m // 4)), max(1, cap // 4))
    lx = max(4, min(pow2_ceil(-(-n // 4)), 32, cap // ly))
    return lx, ly


def record_gemm(layer, cmd, fp16: bool, m: int, n: int, k: int, a: GemmOperand, b: GemmOperand,
                c: GemmOperand | None, out: GemmOperand, batch: int = 1, batch_inner: int = 1,
                alpha: float = 1.0, beta: float = 1.0, activation=(0, 0.0, 0.0), fp16_arithmetic: bool = False) -> None:
    """Record out = act((A @ B + beta * C) * alpha) over `batch` products (shaders/gemm.comp).

    fp16_arithmetic (dispatch_options.arithmetic_fp16): the tiled kernel may compute in fp16
    (its fp16a variant; the other modes and the tensor-core kernel keep fp32 sums)."""
    if m <= 0 or n <= 0 or batch <= 0:
        return
    if k <= 0:  # an empty sum: the product is zero, the epilogue still runs
        a = GemmOperand(a.mat, 0, 0)
    specs = list(activation) + [int(c is not None), a.elempack, out.elempack]
    if fp16 and gemm_on_tensor_cores(cmd.vkdev, m, n * batch, k, cmd.use_cooperative_matrix):
        log_kernel(layer, "gemm_coopmat", f"cooperative matrices (tensor cores) on {batch} fp16 {m}x{n}x{k} products")
        pipeline = shader_pipeline(layer.vkdev, "gemm_coopmat", fp16, specs, (128, 1, 1))
        _record(cmd, pipeline, m, n, k, a, b, c, out, batch_inner, alpha, beta, (-(-n // 64) * 128, -(-m // 64), batch))
        return
    if m <= 4 and b.s_row == 1 and k >= 64:
        mode = 1        # matrix-vector, k contiguous in B: split k over a workgroup
        lx = min(workgroup_cap(cmd.vkdev), max(16, pow2_ceil(k) // 16))
        local = (lx, 1, 1)
        gx = min(n, 32768)
        global_size = (gx * lx, -(-n // gx), batch)
    elif m <= 4 or m * n <= 256:
        mode = 2        # one invocation per output
        lx = min(64, pow2_ceil(n))
        local = (lx, max(1, min(64 // lx, pow2_ceil(m))), 1)
        global_size = (n, m, batch)
    else:
        mode = 0        # tiled through shared memory
        lx, ly = gemm_tile(m, n, workgroup_cap(cmd.vkdev))
        local = (lx, ly, 1)
        global_size = (-(-n // (4 * lx)) * lx, -(-m // (4 * ly)) * ly, batch)
    log_kernel(layer, f"gemm mode {mode}", ("tiled through shared memory", "matrix-vector, k split over a workgroup",
                                            "one invocation per output")[mode] + f": {batch} x {m}x{n}x{k}")
    pipeline = shader_pipeline(layer.vkdev, "gemm", fp16, specs, local, {"MODE": mode}, fp16_arithmetic=fp16_arithmetic)
    _record(cmd, pipeline, m, n, k, a, b, c, out, batch_inner, alpha, beta, global_size)


def _record(cmd, pipeline, m, n, k, a, b, c, out, batch_inner, alpha, beta, global_size) -> None:
    c_push = c.push() if c is not None else [0, 0, 0, 0, 0]
    constants = [m, n, k, max(1, batch_inner)] + a.push() + b.push() + c_push + out.push() + \
        [float(alpha), float(beta)]
    cmd.record_pipeline(pipeline, [a.mat, b.mat, c.mat if c is not None else None, out.mat], constants,
                        global_size)


def tensor_core_device(vkdev, allowed: bool = True) -> bool:
    """Does the device multiply 16x16x16 fp16 tiles into fp32 with 32-wide subgroups (NVIDIA),
    as convolution_coopmat.comp and gemm_coopmat.comp need? `allowed` is the recording's
    opt.use_cooperative_matrix (VkCompute.use_cooperative_matrix); VKNCNN_COOPMAT=0 says no
    for every net (to compare)."""
    info = vkdev.info
    return (allowed and info.support_cooperative_matrix_16x16x16_fp16() and info.subgroup_size() == 32
            and os.environ.get("VKNCNN_COOPMAT", "1") != "0")


def gemm_on_tensor_cores(vkdev, m: int, n: int, k: int, allowed: bool = True) -> bool:
    """gemm_coopmat.comp for this fp16 product (n: all the batch's columns)? At least one
    16-row fragment, two 16-deep steps of k, and GEMM_TENSOR_CORE_MIN_MACS multiply-adds."""
    return m >= 16 and k >= 32 and m * n * k >= GEMM_TENSOR_CORE_MIN_MACS and tensor_core_device(vkdev, allowed)


# innerproduct_gemv.comp's storage buffers with a folded RMSNorm's gamma and a gated
# product's second weights and input (the plain kernel binds 4), and with a folded RoPE's
# cos and sin too
GEMV_FOLD_BINDINGS = 7
GEMV_ROPE_BINDINGS = 9
# innerproduct_gemv.comp's MERGE_MAX_K4, MERGE_MAX_STEPS and MERGE_MAX_SPLITS
GEMV_MERGE_MAX_K4 = 512
GEMV_MERGE_MAX_STEPS = 16
GEMV_MERGE_MAX_SPLITS = 16
# The most values (splits x row length) a merging product takes. Each of its workgroups
# merges the whole row, so the merge's cost grows with both; up to this many (12 splits of
# 2048) it was measured to pay (docs/perf-notes.md, "the o projection merges the attention's
# splits"), and past it the attention merges its splits itself.
GEMV_MERGE_MAX_VALUES = 24576


def record_gemv(layer, cmd, fp16: bool, x, weight, bias, top, row_offset: int, k: int,
                activation=(0, 0.0, 0.0), prenorm=None, up=None, rope=None, scale: float = 1.0,
                opt=None) -> None:
    """top[row_offset + r] = act(dot(weight[r], x) + bias[row_offset + r]) for every row r of
    `weight` (rows of k contiguous scalars, k % 4 == 0) and a contiguous input vector x
    (shaders/innerproduct_gemv.comp: vec4 loads, gemv_workgroup's invocations per row).

    prenorm: (eps, gamma VkMat or None) of an RMSNorm over x folded into the product (x is
    then the norm's input). up: (weight rows U, input x_up) of a second product the first
    multiplies after its activation, top[r] = act(...) * dot(U[r], x_up) (x_up is x with
    prenorm). rope: (1 for pairs (j, j + dim/2) or 2 for (2j, 2j + 1), dim, cos, sin) of
    a one-token RotaryEmbed over heads of dim outputs (no activation then). scale: the
    product's factor before the bias (not with up or rope). x may be a SplitRecords (an
    attention's splits, gemv_merge_fits): the kernel merges them into the input row first.
    opt: the recording's Option (its use_subgroup_ops; None: as the device allows)."""
    rows = weight.numpy_shape()[0]
    lx, ly = gemv_workgroup(cmd.vkdev, k, paired=rope is not None)
    merge = x if isinstance(x, SplitRecords) else None
    if merge is not None and (prenorm is not None or up is not None or rope is not None
                              or merge.row_length != k or not gemv_merge_fits(cmd.vkdev, k, merge.splits)):
        raise GpuError(f"{layer.name!r}: an attention's splits merge only into a plain product of their row")
    eps, gamma = prenorm if prenorm is not None else (0.0, None)
    mode = 0 if prenorm is None else 2 if gamma is not None else 1
    up_weight, x_up = up if up is not None else (None, None)
    rope_mode, rope_dim, cos, sin = rope if rope is not None else (0, 2, None, None)
    folds = prenorm is not None or up is not None
    binds = GEMV_ROPE_BINDINGS if rope is not None else GEMV_FOLD_BINDINGS if folds else 4
    specs = list(activation) + [int(bias is not None), k // 4, rows, row_offset, mode, float(eps), int(up is not None),
                                rope_mode, rope_dim, float(scale)]
    defines = {"BINDINGS": binds, "SUBGROUP": int(GEMV_SUBGROUP and use_subgroups(cmd.vkdev, opt, lx * ly))}
    if merge is not None:
        specs += [merge.splits, merge.dv // 4]
        defines["MERGE"] = 1
    pipeline = shader_pipeline(layer.vkdev, "innerproduct_gemv", fp16, specs, (lx, ly, 1), defines)
    groups = -(-rows // ly)
    gx = min(groups, 32768)
    bindings = [x, weight, bias, top] + [gamma, up_weight, x_up, cos, sin][:binds - 4]
    cmd.record_pipeline(pipeline, bindings, [], (gx * lx, -(-groups // gx) * ly, 1))


def gemv_merge_fits(vkdev, k: int, splits: int = 1) -> bool:
    """Can innerproduct_gemv.comp's MERGE read a row of k values as an attention's splits
    (`splits` a head)? Its shared row holds GEMV_MERGE_MAX_K4 vec4s (beside its three
    256-float sums), each invocation GEMV_MERGE_MAX_STEPS of its weight loads and the records
    of GEMV_MERGE_MAX_SPLITS splits."""
    lx, _ = gemv_workgroup(vkdev, k)
    shared = 4 * (3 * 256 + 4 * GEMV_MERGE_MAX_K4)
    return (k % 4 == 0 and 0 < k // 4 <= GEMV_MERGE_MAX_K4 and -(-(k // 4) // lx) <= GEMV_MERGE_MAX_STEPS
            and 0 < splits <= GEMV_MERGE_MAX_SPLITS and shared <= vkdev.info.max_shared_memory_size())


def gemv_merge_pays(vkdev, k: int, splits: int) -> bool:
    """Should the product reading an attention's output of k values, split `splits` ways a
    head, merge the splits (rather than the attention)? Where the kernel can, and the row's
    splits hold at most GEMV_MERGE_MAX_VALUES values."""
    return gemv_merge_fits(vkdev, k, splits) and splits * k <= GEMV_MERGE_MAX_VALUES


def gemv_folds_fit(vkdev, bindings: int = GEMV_FOLD_BINDINGS) -> bool:
    """Can the matrix-vector kernel take a folded RMSNorm or gate (or, bindings =
    GEMV_ROPE_BINDINGS, a RoPE) here? Devices with fewer storage buffers per stage record
    the layers apart."""
    return vkdev.info.max_per_stage_storage_buffers() >= bindings


# innerproduct_gemv.comp's vec4 loads per invocation and row (at most): each invocation
# issues them all before it adds (the loop has a constant trip count), so that enough loads
# are in flight to keep memory busy; a longer row gets more invocations instead of more
# steps. More steps an invocation (fewer invocations a row, more rows a workgroup) ran the
# products faster on the H100, 2 to 16 (docs/perf-notes.md).
GEMV_STEPS = 16
# invocations of its workgroup (at most 256: the shader's shared arrays)
GEMV_WORKGROUP = 256
# 1: a row's partial sums meet by subgroup shuffles where the device has them (0: always in
# a shared-memory tree, log2(invocations a row) + 1 barriers)
GEMV_SUBGROUP = 1


def gemv_workgroup(vkdev, k: int, paired: bool = False) -> tuple[int, int]:
    """(invocations per row, rows) of innerproduct_gemv.comp's workgroup for rows of k
    scalars: 32 to all the workgroup's invocations per row, so that each makes at most
    GEMV_STEPS vec4 loads where it can; paired (a folded RoPE): an even number of rows."""
    total = workgroup_cap(vkdev, GEMV_WORKGROUP)
    widest = total // 2 if paired else total
    lx = max(min(32, widest), min(widest, pow2_ceil(-(-k // (4 * GEMV_STEPS)))))
    return lx, max(1, total // lx)
