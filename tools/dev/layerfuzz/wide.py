"""`<Layer>@wide` fuzz cases: a layer's own generator, redrawn with channel counts up to 128
(and, for the matrix layers, extents up to 3x as large).

The base generators keep channels <= 24 and extents <= ~17, which never reach the kernels
real models spend their time in: 32+ output channels take convolution.comp's 8-rows-per-
invocation tile on a CPU device, counts like 33 / 40 / 72 leave a partial pack4 or pack8
item after whole ones, and K beyond a workgroup's tile walks the K loop more than once.
The base generators stay as they are (their seeds replay the same cases); these wrap them.
"""

from __future__ import annotations

from contextlib import contextmanager

from . import activation, conv, draw, elementwise, matrix, norm, pooling, reduction, resample, shape
from .case import Case

WIDE_CHANNELS = (1, 3, 8, 16, 24, 32, 33, 40, 48, 64, 72, 96, 128)


@contextmanager
def _drawing(module, channels: tuple, extent_scale: int):
    """While drawing: `channels()` picks from `channels`; `extent()` as seen by `module`
    reaches `extent_scale` times as far."""
    saved_channels = draw.CHANNELS
    draw.CHANNELS = channels
    if extent_scale > 1:
        saved_extent = module.extent
        module.extent = lambda rng, lo=1, hi=13: saved_extent(rng, lo, hi * extent_scale)
    try:
        yield
    finally:
        draw.CHANNELS = saved_channels
        if extent_scale > 1:
            module.extent = saved_extent


def _wide(gen, module, extent_scale: int = 1):
    def wide(rng):
        with _drawing(module, WIDE_CHANNELS, extent_scale):
            return gen(rng)
    return wide


def winograd_shaped(rng):
    """A convolution of the shape the Winograd path takes (gpu/ops/winograd_convolution.py): 3x3, stride 1,
    dilation 1, one group, channels in whole pack4 items; any padding, bias, activation.
    Only the gpuD paths (discrete.py) take it on a CPU device."""
    inc, outc = (draw.pick(rng, (4, 8, 12, 16, 24, 32, 48, 64)) for _ in range(2))
    p = _winograd_params(rng, inc, outc)
    h, w = draw.extent(rng, 3, 19), draw.extent(rng, 3, 19)
    return Case("Convolution", p, [draw.tensor(rng, (inc, h, w))], tol=2e-4, tol16=2e-2)


def cpu_winograd_shaped(rng):
    """A convolution that the numpy path runs through Winograd (cpu_fallback/conv_kernels.py:
    winograd_tile): 32+ channels on both sides and outputs of 28+ (F(4, 3), rows of 14+
    tiles too), or 144+ input channels on 14-27 (F(2, 3)). The other generators stay below
    those sizes."""
    if draw.chance(rng, 0.2):
        inc, outc = draw.pick(rng, (144, 160, 192)), draw.pick(rng, (32, 40, 64))
        h, w = (int(rng.integers(14, 28)) for _ in range(2))
    else:
        inc, outc = (draw.pick(rng, (32, 33, 40, 48, 64, 72, 96)) for _ in range(2))
        h, w = (int(rng.integers(28, 71)) for _ in range(2))
    p = _winograd_params(rng, inc, outc)
    return Case("Convolution", p, [draw.tensor(rng, (inc, h, w))], tol=2e-4, tol16=2e-2)


def _winograd_params(rng, inc: int, outc: int) -> dict:
    """Params of a 3x3 stride-1 Convolution of inc -> outc: any padding (per side, SAME),
    bias or not, any activation."""
    p = {0: outc, 1: 3, 5: int(draw.chance(rng, 0.7)), 6: outc * inc * 9}
    pad = int(rng.integers(0, 4))
    if pad == 1:
        p[4] = 1
    elif pad == 2:  # per side: left, right, top, bottom
        p.update({4: int(rng.integers(0, 3)), 15: int(rng.integers(0, 3)), 14: int(rng.integers(0, 3)),
                  16: int(rng.integers(0, 3))})
    elif pad == 3:
        p[4] = draw.pick(rng, (-233, -234))
    p.update(draw.activation(rng))
    return p


GENERATORS = {
    "Convolution@winograd": winograd_shaped,
    "Convolution@cpuwinograd": cpu_winograd_shaped,
    "Convolution@wide": _wide(conv.convolution, conv),
    "ConvolutionDepthWise@wide": _wide(conv.convolution_depthwise, conv),
    "Deconvolution@wide": _wide(conv.deconvolution, conv),
    "DeconvolutionDepthWise@wide": _wide(conv.deconvolution_depthwise, conv),
    "Pooling@wide": _wide(pooling.pooling, pooling, 2),
    "InnerProduct@wide": _wide(matrix.innerproduct, matrix),
    "Gemm@wide": _wide(matrix.gemm, matrix, 4),
    "MatMul@wide": _wide(matrix.matmul, matrix, 4),
    "Convolution1D@wide": _wide(conv.convolution1d, conv),
    "Convolution3D@wide": _wide(conv.convolution3d, conv),
    "BinaryOp@wide": _wide(elementwise.binaryop, elementwise),
    "Eltwise@wide": _wide(elementwise.eltwise, elementwise),
    "Softmax@wide": _wide(norm.softmax, norm),
    "LayerNorm@wide": _wide(norm.layernorm, norm),
    "GroupNorm@wide": _wide(norm.groupnorm, norm),
    "InstanceNorm@wide": _wide(norm.instancenorm, norm),
    "BatchNorm@wide": _wide(norm.batchnorm, norm),
    "PReLU@wide": _wide(activation.prelu, activation),
    "Reduction@wide": _wide(reduction.reduction, reduction),
    "HardSwish@wide": _wide(activation.ACTIVATIONS["HardSwish"], activation),
    "Concat@wide": _wide(shape.concat, shape),
    "Slice@wide": _wide(shape.slice_, shape),
    "Crop@wide": _wide(shape.crop, shape),
    "Padding@wide": _wide(shape.padding, shape),
    "Permute@wide": _wide(shape.permute, shape),
    "Interp@wide": _wide(resample.interp, resample, 2),
    "Reshape@wide": _wide(shape.reshape, shape),
}
