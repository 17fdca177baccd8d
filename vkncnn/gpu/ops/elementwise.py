"""GPU halves of the elementwise layers: four shaders behind ~25 layer types.

    unaryop.comp   y = f(x): every activation, UnaryOp, Power/Exp/Log, Threshold, Cast
    affine.comp    y = x*s[c] + b[c] or PReLU along the channel axis: BatchNorm, Bias, Scale, PReLU
    binaryop.comp  y = op(a, b) with ncnn's broadcasting, or op(a, scalar): BinaryOp
    eltwise.comp   y = a*ca (op) b*cb, folded over N inputs: Eltwise

Each layer module keeps its own create_pipeline / forward_gpu and calls one of the small
recorders below (UnaryGpu, AffineGpu, BinaryGpu, EltwiseGpu); they hold the layer's
pipelines and know how to dispatch the shader.

Storage precision is read from the tensor (2-byte scalars = fp16 storage), not from opt:
create_pipeline builds the variants the Net's options ask for, and a tensor stored the other
way still runs (its pipeline is made on first use). fp16 arithmetic is the option's
(use_fp16_arithmetic, on fp16-stored tensors). Elementwise work ignores packing, so the
flat shaders take the vec4 variant whenever the scalar count divides by 4.
"""

from __future__ import annotations

from math import prod

import numpy as np

from vkncnn.cpu_fallback import binary

from ...errors import ShapeError
from ..vulkan.pipeline import Pipeline, optimal_local_size, shader_pipeline
from ..vulkan.vkmat import VkMat, use_fp16_storage
from .dispatch_options import arithmetic_fp16, storage_is_fp16

# -- unaryop.comp op codes (the shader's OP_* constants) -----------------------------------
RELU, SIGMOID, SWISH, GELU, GELU_FAST, HARDSWISH, HARDSIGMOID, CLIP, TANH, ELU, MISH = range(11)
POWER, EXP, LOG, THRESHOLD, SELU, SOFTPLUS, COPY, ROUND_FP16, ROUND_BF16 = range(11, 20)
ERF, CELU, SHRINK, BNLL = range(20, 24)
UNARY_BASE = 32  # UnaryOp op_type k is code UNARY_BASE + k
ABS = UNARY_BASE + 0

# -- binaryop.comp modes -------------------------------------------------------------------
BROADCAST, SAME_LAYOUT, WITH_SCALAR = 0, 1, 2


def flat_global_size(pipeline: Pipeline, vkdev, n: int) -> tuple:
    """Global size for n invocations numbered y * row + x (the shaders' flat index).

    One row while the workgroup count fits the device's x limit; beyond it, rows of the
    maximum width (the shaders skip indices >= n).
    """
    lx = pipeline.local_size_x
    max_groups = vkdev.info.max_workgroup_count()[0]
    groups = -(-n // lx)
    if groups <= max_groups:
        return (n, 1, 1)
    return (max_groups * lx, -(-groups // max_groups), 1)


class ShaderVariants:
    """One layer's pipelines of one built-in shader, keyed by (fp16 storage, fp16 arithmetic, PACK4)."""

    def __init__(self, vkdev, shader: str, specializations: list) -> None:
        self.vkdev = vkdev
        self.shader = shader
        self.specializations = list(specializations)
        self._pipelines: dict = {}

    def prepare(self, opt, pack4_values=(0, 1)) -> None:
        """Build what the Net's options ask for now, as ncnn does at create_pipeline."""
        fp16 = use_fp16_storage(opt, self.vkdev)
        for pack4 in pack4_values:
            self.get(fp16, pack4, arithmetic_fp16(opt, fp16))

    def get(self, fp16: bool, pack4: int, fp16_arithmetic: bool = False) -> Pipeline:
        key = (bool(fp16), bool(fp16_arithmetic), int(pack4))
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            pipeline = self._pipelines[key] = shader_pipeline(
                self.vkdev, self.shader, key[0], self.specializations, optimal_local_size(self.vkdev, 64, 1, 1),
                {"PACK4": key[2]}, fp16_arithmetic=key[1])
        return pipeline

    def for_tensor(self, ref: VkMat, pack4: int, opt) -> Pipeline:
        """The pipeline for a dispatch over `ref` under the extractor's options."""
        fp16 = storage_is_fp16(ref)
        return self.get(fp16, pack4, arithmetic_fp16(opt, fp16))


def _flat_dispatch(cmd, variants: ShaderVariants, bindings: list, extra_constants: list, ref: VkMat, opt) -> None:
    """Run a flat shader over ref's scalars, as vec4 when their count divides by 4."""
    scalars = ref.total() * ref.elempack
    pack4 = int(scalars % 4 == 0)
    n = scalars // 4 if pack4 else scalars
    pipeline = variants.for_tensor(ref, pack4, opt)
    cmd.record_pipeline(pipeline, bindings, [n] + list(extra_constants), flat_global_size(pipeline, cmd.vkdev, n))


# -- unary ---------------------------------------------------------------------------------
class UnaryGpu:
    """y = f(x) through unaryop.comp, f = (op code, up to 3 float params)."""

    def __init__(self, vkdev, opt, op: int, *params: float) -> None:
        values = [float(v) for v in params] + [0.0] * (3 - len(params))
        self.variants = ShaderVariants(vkdev, "unaryop", [int(op)] + values)
        self.variants.prepare(opt)

    def forward(self, bottom: VkMat, cmd, opt) -> VkMat:
        top = VkMat.create_like(bottom, cmd.blob_allocator(opt))
        _flat_dispatch(cmd, self.variants, [bottom, top], [], bottom, opt)
        return top


def unary_gpu(layer, opt, op: int, *params: float) -> UnaryGpu | None:
    """The layer's UnaryGpu, or None on the numpy path (no device bound)."""
    if layer.vkdev is None or not layer.support_vulkan:
        return None
    return UnaryGpu(layer.vkdev, opt, op, *params)


# -- per-channel affine ---------------------------------------------------------------------
AFFINE, PRELU = 0, 1


class AffineGpu:
    """Per-channel y = x*scale[c] + bias[c] (mode AFFINE) or PReLU through affine.comp.

    scale / bias: host arrays (uploaded as fp32 by upload()), None when absent;
    scale_from_blob: the scales come from a second input at forward time instead.
    forward(per_channel=False): element 0 serves every channel.
    """

    def __init__(self, vkdev, opt, mode: int, scale=None, bias=None, scale_from_blob: bool = False) -> None:
        self.scale = None if scale is None else np.asarray(scale, np.float32).ravel()
        self.bias = None if bias is None else np.asarray(bias, np.float32).ravel()
        has_scale = self.scale is not None or scale_from_blob
        self.bias_offset = 0 if self.scale is None else self.scale.size
        self.variants = ShaderVariants(vkdev, "affine", [mode, int(has_scale), int(self.bias is not None),
                                                         int(scale_from_blob)])
        self.variants.prepare(opt)
        self.params_gpu = None

    def upload(self, cmd, opt) -> None:
        parts = [a for a in (self.scale, self.bias) if a is not None]
        if not parts:
            return
        fp32 = opt.copy()
        fp32.use_fp16_storage = False  # parameters stay fp32 whatever the blobs are stored in
        self.params_gpu = cmd.record_upload(np.concatenate(parts), fp32, elempack=1)

    def forward(self, bottom: VkMat, cmd, opt, scale_blob: VkMat | None = None,
                per_channel: bool = True) -> VkMat:
        top = VkMat.create_like(bottom, cmd.blob_allocator(opt))
        if scale_blob is not None and scale_blob.elempack != 1 and scale_blob.dims == 2 and scale_blob.w != 1:
            # the shader reads the scales as a flat list: only a row-packed 2-D blob is not one
            scale_blob = cmd.vkdev.convert_packing(scale_blob, 1, cmd, opt)
        n = bottom.total()
        if per_channel:
            inner, lane_step = {1: 1, 2: bottom.w}.get(bottom.dims, bottom.cstep), 1
        else:
            inner, lane_step = max(n, 1), 0  # one group holding everything, every lane index 0
        pipeline = self.variants.for_tensor(bottom, int(bottom.elempack == 4), opt)
        cmd.record_pipeline(pipeline, [bottom, top, self.params_gpu, scale_blob],
                            [n, inner, self.bias_offset, lane_step], flat_global_size(pipeline, cmd.vkdev, n))
        return top

    def release(self) -> None:
        if self.params_gpu is not None:
            self.params_gpu.release()
            self.params_gpu = None


# -- binary with broadcasting -------------------------------------------------------------
def _expanded_shapes(a_shape: tuple, b_shape: tuple) -> tuple:
    """Both shapes seen at the output rank, by the CPU half's rule (one source of truth).

    The CPU half works on arrays; zero-stride views of the shapes cost no memory.
    """
    def view(shape):
        return np.broadcast_to(np.zeros((), np.float32), shape)

    a2, b2 = binary.broadcast_shapes(view(a_shape), view(b_shape))
    return tuple(a2.shape), tuple(b2.shape)


def _broadcast_extent(x: int, y: int) -> int:
    """An output axis from two operand axes that match or are 1 (a 1 against 0 gives 0, as numpy)."""
    return y if x == 1 else x


def operand_constants(shape: tuple, expanded: tuple, elempack: int) -> list:
    """[pack, inner, axis, r1, r2, r3] addressing one operand from the 4-axis output index.

    The expanded shape only inserts size-1 axes: the original axes keep their order, lined
    up with the outer output axes (a prefix) or, for the legacy 1-D row, with w (the last).
    """
    k, n = len(shape), len(expanded)
    if k == 1 and n > 1 and expanded[0] != shape[0]:
        mapping = [n - 1]
    else:
        mapping = list(range(k))
    axis, r = -1, [0, 0, 0, 0]
    for i, j in enumerate(mapping):
        if shape[i] == 1:
            continue  # broadcast along this output axis
        if i == 0:
            axis = j
        else:
            r[j] = prod(shape[i + 1:])
    return [elempack, prod(shape[1:]), axis, r[1], r[2], r[3]]


def broadcast_plan(a_shape: tuple, b_shape: tuple, a_pack: int, b_pack: int) -> tuple:
    """(output numpy shape, a's constants, b's constants) for binaryop.comp's broadcast mode."""
    a2, b2 = _expanded_shapes(a_shape, b_shape)
    out = tuple(_broadcast_extent(x, y) for x, y in zip(a2, b2))
    return out, operand_constants(a_shape, a2, a_pack), operand_constants(b_shape, b2, b_pack)


class BinaryGpu:
    """BinaryOp through binaryop.comp: two tensors with broadcasting, or a tensor and a scalar."""

    def __init__(self, vkdev, opt, op_type: int, with_scalar: bool = False, b: float = 0.0) -> None:
        self.with_scalar = bool(with_scalar)
        if self.with_scalar:
            self.flat = ShaderVariants(vkdev, "binaryop", [op_type, WITH_SCALAR, float(b)])
            self.flat.prepare(opt)
        else:
            self.flat = ShaderVariants(vkdev, "binaryop", [op_type, SAME_LAYOUT, 0.0])
            self.broadcast = ShaderVariants(vkdev, "binaryop", [op_type, BROADCAST, 0.0])
            self.flat.prepare(opt)
            self.broadcast.prepare(opt, pack4_values=(0,))

    def forward_scalar(self, a: VkMat, cmd, opt) -> VkMat:
        top = VkMat.create_like(a, cmd.blob_allocator(opt))
        _flat_dispatch(cmd, self.flat, [a, None, top], [0] * 16, a, opt)
        return top

    def forward(self, a: VkMat, b: VkMat, cmd, opt) -> VkMat:
        # an empty operand makes an empty output; it may have been uploaded as fp32 in fp16
        # storage (nothing to cast), so the non-empty one tells the output's precision
        ref = a if a.total() or not b.total() else b
        if a.total() and b.total() and b.scalar_size() != a.scalar_size():
            raise ShapeError(f"BinaryOp operands are stored in different precisions "
                             f"({a.scalar_size()} and {b.scalar_size()} bytes per scalar)")
        a_shape, b_shape = a.numpy_shape(), b.numpy_shape()
        if a_shape == b_shape and a.elempack == b.elempack:
            top = VkMat.create_like(a, cmd.blob_allocator(opt))
            _flat_dispatch(cmd, self.flat, [a, b, top], [0] * 16, a, opt)
            return top
        out_shape, a_consts, b_consts = broadcast_plan(a_shape, b_shape, a.elempack, b.elempack)
        n = prod(out_shape)
        if n >= 2**31:
            raise ShapeError(f"BinaryOp output {out_shape} has 2^31 scalars or more (32-bit indexing)")
        # the output packs like any blob ncnn makes: by 4 when its packing axis divides by 4
        out_pack = 4 if opt.use_packing_layout and out_shape[0] % 4 == 0 else 1
        top = VkMat.for_numpy_shape(out_shape, out_pack, ref.scalar_size(), cmd.blob_allocator(opt))
        o = (tuple(out_shape) + (1, 1, 1))[1:4]
        pipeline = self.broadcast.for_tensor(ref, 0, opt)
        cmd.record_pipeline(pipeline, [a, b, top], [n, *o, out_pack, *a_consts, *b_consts],
                            flat_global_size(pipeline, cmd.vkdev, n))
        return top


# -- eltwise --------------------------------------------------------------------------------
class EltwiseGpu:
    """Eltwise through eltwise.comp: N same-shape inputs folded two at a time."""

    NO_ACTIVATION = (0, 0.0, 0.0)

    def __init__(self, vkdev, opt, op_type: int, coeffs=None) -> None:
        self.vkdev = vkdev
        self.op_type = int(op_type)
        self.coeffs = None if coeffs is None or len(coeffs) == 0 else [float(c) for c in coeffs]
        self._variants: dict[tuple, ShaderVariants] = {}  # by the activation of the fold
        self._with_activation(self.NO_ACTIVATION).prepare(opt)

    def forward(self, bottoms: list, cmd, opt, activation=None) -> VkMat:
        """The Eltwise of `bottoms`; `activation` (type, p0, p1) fused into its last fold."""
        first = bottoms[0]
        mats = [m if m.elempack == first.elempack else cmd.vkdev.convert_packing(m, first.elempack, cmd, opt)
                for m in bottoms]
        coeff = self.coeffs or [1.0] * len(mats)
        acc = mats[0]
        plain = self._with_activation(self.NO_ACTIVATION)
        last = self._with_activation(activation or self.NO_ACTIVATION)
        for i, m in enumerate(mats[1:], start=1):
            top = VkMat.create_like(first, cmd.blob_allocator(opt))
            variants = last if i == len(mats) - 1 else plain
            _flat_dispatch(cmd, variants, [acc, m, top], [coeff[0] if i == 1 else 1.0, coeff[i]], first, opt)
            if acc is not mats[0]:
                acc.release()  # an intermediate sum: its buffer goes back to the pool
            acc = top
        return acc

    def _with_activation(self, activation) -> ShaderVariants:
        key = tuple(activation)
        variants = self._variants.get(key)
        if variants is None:
            variants = self._variants[key] = ShaderVariants(self.vkdev, "eltwise", [self.op_type, *key])
        return variants
