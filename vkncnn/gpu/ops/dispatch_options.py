"""The choices the layers' GPU recorders share: fused activation constants, storage
precision and packing read off the tensors, and how many workgroups fill the device.
(Pipelines themselves come from gpu.vulkan.pipeline.shader_pipeline.)"""

from __future__ import annotations

import numpy as np

from ..vulkan.pipeline import workgroup_cap  # noqa: F401  (the kernels' choices import it from here)


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


def storage_is_fp16(mat) -> bool:
    """fp16 storage is read off the tensor itself, so a pipeline never reinterprets its data."""
    return mat.scalar_size() == 2


def arithmetic_fp16(opt, fp16: bool) -> bool:
    """Whether a dispatch on tensors of this storage asks for fp16 arithmetic: fp16 storage
    and opt.use_fp16_arithmetic. The device's shaderFloat16 and the shader's own fp16a
    variant are checked where the pipeline is made (pipeline.shader_pipeline)."""
    return bool(fp16 and getattr(opt, "use_fp16_arithmetic", False))


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


def parallel_target(vkdev) -> int:
    """Workgroups a convolution should be cut into to keep the device busy (split-K below
    half of it). A GPU has dozens to hundreds of compute units, each wanting several
    workgroups in flight to hide memory latency (with only one or two per unit, large 3x3
    convolutions ran far slower: figures in docs/perf-notes.md, "Workgroups per compute
    unit"); a CPU implementation (lavapipe) runs them on a handful of threads."""
    return 1 if vkdev.info.type() == 3 else 1024


def pow2_ceil(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def plane_local_size(x: int, y: int, z: int) -> tuple:
    """A local size of ~64 invocations for a (width, height, items) grid: up to 16 along a row,
    then rows, then items, never wider than the grid itself."""
    lx = min(16, pow2_ceil(x))
    ly = min(max(1, 64 // lx), pow2_ceil(y))
    lz = min(max(1, 64 // (lx * ly)), pow2_ceil(z))
    return lx, ly, lz
