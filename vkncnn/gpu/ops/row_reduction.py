"""Row-wise reductions on the GPU: the machinery shared by Reduction, Softmax, LayerNorm,
InstanceNorm, GroupNorm, RMSNorm and Normalize (shaders/reduction_rows.comp and the
element-wise passes softmax.comp / normalize_rows.comp).

The idea: every one of these layers reduces *rows* of a tensor (the elements that share
some coordinates) into a few numbers, then maybe rewrites each element from its row's
numbers. Which coordinates make a row differs per layer, so rows are described on the
tensor's packed layout, the order its scalars have in the buffer:

    (axis0 / elempack, a1, a2, a3, elempack)        numpy shape (a0, a1, a2, a3), dense

Each of those five axes is *kept* (it tells rows apart) or *reduced* (it runs along a
row). Axis 0 is split in two (item, lane): reducing numpy axis 0 reduces both. Size-1
axes are dropped and neighbours with the same mark merged, so a layout has at most five
merged axes, three of one kind and two of the other. A row's scalar addresses are then
base(g) + offset(k), each a short sum of coordinate * stride, and no layer ever needs
its input repacked. Rows are numbered in packed order of the kept axes: for Reduction
that is exactly the scalar address of the result in its output tensor (see
Reduction.forward_gpu for why).

How the work is shaped (RowReducer.record):
  * short rows (or very many rows): one invocation per row;
  * otherwise one workgroup per row (64 invocations, 256 for long rows), its partial
    states merged with subgroup shuffles when the device has them (shared memory
    otherwise);
  * long rows with few rows: split into segments, one workgroup each, writing partial
    states that a second dispatch merges.
States are vec4 in fp32 whatever the storage, so accumulation is always fp32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vkncnn.gpu.vulkan.pipeline import Pipeline, shader_pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage

# reduction_rows.comp `op`
OP_SUM, OP_ASUM, OP_SUMSQ, OP_MAX, OP_MIN, OP_PROD, OP_SUMEXP, OP_MOMENTS, OP_SOFTMAX = range(9)
# reduction_rows.comp `fin`
FIN_PARTIAL, FIN_REDUCTION, FIN_MOMENTS, FIN_RMS, FIN_L2NORM, FIN_STATE = range(6)
# reduction_rows.comp `post` (for FIN_REDUCTION)
POST_NONE, POST_LOG, POST_SQRT = range(3)

# Work-shape thresholds. Module attributes so tests can force each path on small tensors.
PER_THREAD_MAX_K = 64         # rows this short: one invocation per row
MANY_ROWS = 8192              # ... and rows up to PER_THREAD_MANY_ROWS_K long when this many
PER_THREAD_MANY_ROWS_K = 256
SPLIT_MAX_ROWS = 64           # split rows into segments only when there are fewer rows
SEGMENT_LEN = 4096            # elements per segment (at least)
MAX_SEGMENTS = 256
GROUP_LOCAL = 256             # invocations of a per-row workgroup for long rows (a power of 2)
GROUP_LOCAL_SHORT = 64        # ... for rows up to SHORT_ROW elements
SHORT_ROW = 2048
FLAT_LOCAL = 64               # invocations per workgroup of the element-wise passes
FORCE_SHARED_MEMORY = False   # tests: use the shared-memory merge even with subgroup ops

_SUBGROUP_SHUFFLE = 0x10  # VK_SUBGROUP_FEATURE_SHUFFLE_BIT
_MAX_GROUPS = 65535


@dataclass(frozen=True)
class RowLayout:
    """Merged packed axes, outermost first: (size, reduced), and their address strides.

    lanes is 4 when the tensor is pack4 and its lanes are kept: the four scalars of an item
    then belong to rows g..g+3 at the same position, which the element-wise passes use.
    """

    axes: tuple
    strides: tuple
    lanes: int = 1

    @property
    def rows(self) -> int:
        return math.prod(s for s, r in self.axes if not r)

    @property
    def row_len(self) -> int:
        return math.prod(s for s, r in self.axes if r)

    @property
    def total(self) -> int:
        return math.prod(s for s, _ in self.axes)

    def _three(self, reduced: bool) -> list:
        """Sizes then strides of the axes of one kind, padded to three at the front."""
        picked = [(s, t) for (s, r), t in zip(self.axes, self.strides) if r == reduced]
        if len(picked) > 3:
            raise AssertionError(f"row layout {self.axes} has more than three axes of a kind")
        picked = [(1, 0)] * (3 - len(picked)) + picked
        return [s for s, _ in picked] + [t for _, t in picked]

    def reduce_constants(self) -> list:
        """kept sizes, kept strides, reduced sizes, reduced strides (reduction_rows.comp)."""
        return self._three(False) + self._three(True)

    def apply_constants(self) -> list:
        """Five sizes outermost first, the mask of reduced axes, the count of real axes
        (the element-wise passes' rows_row_of)."""
        axes = [(1, False)] * (5 - len(self.axes)) + list(self.axes)
        mask = sum(1 << j for j, (_, r) in enumerate(axes) if r)
        return [s for s, _ in axes] + [mask, len(self.axes)]


def make_layout(axes, lanes: int = 1) -> RowLayout:
    """Drop size-1 axes, merge neighbours of the same kind; axes: dense (size, reduced), outer first."""
    real = [(int(s), bool(r)) for s, r in axes if int(s) != 1]
    merged: list = []
    for s, r in real:
        if merged and merged[-1][1] == r:
            merged[-1] = (merged[-1][0] * s, r)
        else:
            merged.append((s, r))
    if not merged:
        merged = [(1, False)]
    strides, step = [], 1
    for s, _ in reversed(merged):
        strides.append(step)
        step *= s
    return RowLayout(tuple(merged), tuple(reversed(strides)), lanes)


def padded_shape(mat) -> tuple:
    """The VkMat's unpacked numpy shape padded to four axes with trailing ones."""
    shape = tuple(mat.numpy_shape())
    return shape + (1,) * (4 - len(shape))


def numpy_axes_layout(mat, reduced_axes) -> RowLayout:
    """Rows of `mat` that run along the given numpy axes (axis 0 = the packing axis)."""
    a = padded_shape(mat)
    ep = mat.elempack
    red = {int(x) for x in reduced_axes}
    return make_layout([(a[0] // ep, 0 in red), (a[1], 1 in red), (a[2], 2 in red), (a[3], 3 in red),
                        (ep, 0 in red)], lanes=ep if 0 not in red else 1)


def channel_groups_layout(mat, group: int) -> RowLayout:
    """GroupNorm rows: `group` runs of consecutive channels (numpy axis 0), all their elements.

    Needs the channels per group to be a multiple of the elempack (the caller repacks
    otherwise), so that no item straddles two groups.
    """
    a = padded_shape(mat)
    ep = mat.elempack
    per_group = a[0] // group
    if per_group % ep:
        raise AssertionError("channel_groups_layout: a group must hold whole items")
    return make_layout([(group, False), (per_group // ep, True), (a[1] * a[2] * a[3], True), (ep, True)])


def flat_dispatch(n: int, local: int = FLAT_LOCAL) -> tuple:
    """Global size for n invocations on a grid folded into y past 65535 groups along x."""
    gx = max(1, min(n, _MAX_GROUPS * local))
    return (gx, -(-n // gx), 1)


def use_subgroups(vkdev, opt, local: int) -> bool:
    """Subgroup shuffles merge a workgroup's states when the device has them for compute.

    support_subgroup_ops() means basic operations in compute shaders; the merge also needs
    shuffles, and whole subgroups in the workgroup (a power-of-two size no larger than it).
    """
    if FORCE_SHARED_MEMORY or not getattr(opt, "use_subgroup_ops", True):
        return False
    info = vkdev.info
    size = info.subgroup_size()
    return bool(info.support_subgroup_ops() and info.subgroup_ops() & _SUBGROUP_SHUFFLE
                and 0 < size <= local and size & (size - 1) == 0)


def _group_local(vkdev, wanted: int) -> int:
    """`wanted` (a power of two) within the device's workgroup limits."""
    info = vkdev.info
    cap = min(wanted, info.max_workgroup_invocations(), info.max_workgroup_size()[0])
    return 1 << (cap.bit_length() - 1)


def new_workspace(cmd, opt, n_states: int):
    """A device buffer of n_states fp32 vec4 states (an fp32 pack4 1-D VkMat)."""
    return VkMat.create(max(n_states, 1), dims=1, elemsize=16, elempack=4, allocator=cmd.blob_allocator(opt))


def elementwise_pipelines(vkdev, opt, shader: str, spec: list) -> dict:
    """An element-wise second pass by lanes: 1 (a scalar per invocation) and 4 (a pack4 item)."""
    fp16 = use_fp16_storage(opt, vkdev)
    return {lanes: shader_pipeline(vkdev, shader, fp16, list(spec) + [lanes], (FLAT_LOCAL, 1, 1)) for lanes in (1, 4)}


class RowReducer:
    """The pipelines of one (op, fin) reduction and the recording of its 1 or 2 passes."""

    def __init__(self, vkdev, opt, op: int, fin: int, post: int = POST_NONE, eps_mode: int = 0) -> None:
        fp16 = use_fp16_storage(opt, vkdev)

        def make(fin_: int, source: int, per_thread: int, local: int) -> Pipeline:
            defines = {"SUBGROUP": 0 if per_thread else int(use_subgroups(vkdev, opt, local))}
            return shader_pipeline(vkdev, "reduction_rows", fp16, [op, fin_, post, eps_mode, source, per_thread],
                                   (local, 1, 1), defines)

        long_local = _group_local(vkdev, GROUP_LOCAL)
        short_local = _group_local(vkdev, GROUP_LOCAL_SHORT)
        self.per_thread = make(fin, 0, 1, FLAT_LOCAL)
        self.per_group_short = make(fin, 0, 0, short_local)  # a workgroup per row
        self.per_group_long = make(fin, 0, 0, long_local)
        self.partial = make(FIN_PARTIAL, 0, 0, long_local)   # a workgroup per row segment
        self.merge = make(fin, 1, 0, short_local)            # a row's segment states merged

    def record(self, cmd, opt, bottom, layout: RowLayout, state_out=None, top=None, eps: float = 0.0,
               coeff: float = 1.0) -> None:
        """Reduce every row of `bottom`: states/coefficients into state_out, or results into top."""
        G, K = layout.rows, layout.row_len
        if G == 0:
            return  # no rows, nothing to write (and no grid to divide the rows over)
        shape = layout.reduce_constants()
        tail = [float(eps), float(coeff)]
        bindings = [bottom, None, state_out, top]
        if K <= PER_THREAD_MAX_K or (G >= MANY_ROWS and K <= PER_THREAD_MANY_ROWS_K):
            cmd.record_pipeline(self.per_thread, bindings, [G, K, 1, K] + shape + tail, flat_dispatch(G))
            return
        rows_y = min(G, _MAX_GROUPS)
        rows_z = -(-G // rows_y)
        segments = 1
        if G < SPLIT_MAX_ROWS and K > SEGMENT_LEN:
            segments = min(-(-K // SEGMENT_LEN), MAX_SEGMENTS)
        seglen = -(-K // segments)
        segments = -(-K // seglen)
        if segments == 1:
            pipeline = self.per_group_short if K <= SHORT_ROW else self.per_group_long
            cmd.record_pipeline(pipeline, bindings, [G, K, 1, K] + shape + tail,
                                (pipeline.local_size_x, rows_y, rows_z))
            return
        partials = new_workspace(cmd, opt, G * segments)
        cmd.record_pipeline(self.partial, [bottom, None, partials, None], [G, K, segments, seglen] + shape + tail,
                            (self.partial.local_size_x * segments, rows_y, rows_z))
        cmd.record_pipeline(self.merge, [None, partials, state_out, top],
                            [G, segments, 1, segments] + shape + tail, (self.merge.local_size_x, rows_y, rows_z))
        partials.release()


class RowNormalizer:
    """Reduction to per-row (a, b) then y = x * a + b (+ affine): the normalisation layers."""

    def __init__(self, vkdev, opt, op: int, fin: int, affine_index: int = 0, has_beta: bool = False,
                 eps_mode: int = 0) -> None:
        self.reducer = RowReducer(vkdev, opt, op, fin, eps_mode=eps_mode)
        self.has_beta = bool(has_beta)
        self.apply = elementwise_pipelines(vkdev, opt, "normalize_rows", [affine_index, 1 if has_beta else 0])

    def record(self, cmd, opt, bottom, layout: RowLayout, eps: float = 0.0, affine=None,
               coeff: float = 1.0):
        """A new VkMat: bottom normalised row by row (coeff: the reducer's, e.g. K for RMS).
        `affine`: gamma, followed by beta of the same length when the normalizer has one
        (upload_gamma_beta): one buffer keeps the shader within 4 storage buffers."""
        stats = new_workspace(cmd, opt, layout.rows)
        self.reducer.record(cmd, opt, bottom, layout, state_out=stats, eps=eps, coeff=coeff)
        top = VkMat.create_like(bottom, cmd.blob_allocator(opt))
        total = layout.total
        ep = bottom.elempack
        channel_step = bottom.cstep * ep if bottom.dims >= 3 else (bottom.w * ep if bottom.dims == 2 else ep)
        beta_offset = affine.numpy_shape()[0] // 2 if affine is not None and self.has_beta else 0
        cmd.record_pipeline(self.apply[layout.lanes], [bottom, stats, affine, top],
                            [total] + layout.apply_constants() + [channel_step, ep, beta_offset],
                            flat_dispatch(total // layout.lanes))
        stats.release()
        return top


class ContiguousRmsNorm:
    """RMSNorm of rows contiguous in memory (pack1, the normalised axes innermost), one
    dispatch (shaders/rmsnorm_rows.comp): a workgroup per row; with `rope`, each row also
    rotated as a one-token RotaryEmbed over it would (its BINDINGS=5 variant)."""

    def __init__(self, vkdev, opt, affine: bool) -> None:
        self.vkdev, self.fp16, self.affine = vkdev, use_fp16_storage(opt, vkdev), int(affine)
        self.local = _group_local(vkdev, GROUP_LOCAL)
        self.pipeline = self._pipeline(0)

    def _pipeline(self, rope: int):
        binds = ROPE_NORM_BINDINGS if rope else 3
        return shader_pipeline(self.vkdev, "rmsnorm_rows", self.fp16, [self.affine, rope], (self.local, 1, 1),
                               {"BINDINGS": binds})

    @staticmethod
    def takes(bottom, layout: RowLayout) -> bool:
        """Are the rows of `layout` contiguous: row g at g * K, its elements one after another?"""
        if bottom.elempack != 1 or layout.lanes != 1:
            return False
        kinds = [r for _, r in layout.axes]
        return kinds in ([True], [False, True]) and layout.strides[-1] == 1

    def record(self, cmd, opt, bottom, layout: RowLayout, eps: float, gamma, rope=None):
        """rope: (1 for pairs (j, j + K/2) or 2 for (2j, 2j + 1), cos, sin), K/2 angles each."""
        top = VkMat.create_like(bottom, cmd.blob_allocator(opt))
        G, K = layout.rows, layout.row_len
        rows_y = min(G, _MAX_GROUPS)
        pipeline, extra = self.pipeline, []
        if rope is not None:
            pipeline, extra = self._pipeline(rope[0]), list(rope[1:])
        cmd.record_pipeline(pipeline, [bottom, gamma, top] + extra, [G, K, rows_y, float(eps)],
                            (self.local, rows_y, -(-G // rows_y)))
        return top


# rmsnorm_rows.comp's storage buffers with a RoPE folded in (the plain norm binds 3)
ROPE_NORM_BINDINGS = 5


# -- the life cycle shared by the mean/variance norms (LayerNorm, InstanceNorm, GroupNorm) -------
def moments_normalizer(layer, opt, affine_index: int):
    """A RowNormalizer over (mean, variance) with gamma/beta at `affine_index` when the layer
    is affine; None on the numpy path."""
    if layer.vkdev is None:
        return None
    return RowNormalizer(layer.vkdev, opt, OP_MOMENTS, FIN_MOMENTS,
                         affine_index=affine_index if layer.affine else 0, has_beta=True)


def upload_gamma_beta(layer, cmd, opt):
    """gamma then beta in one device buffer (RowNormalizer.record's `affine`), uploaded once
    at load; None when the layer is not affine."""
    if not layer.affine:
        return None
    return cmd.record_upload(np.concatenate([np.ravel(layer.gamma_data), np.ravel(layer.beta_data)]), opt)

