"""Depthwise convolution (one input channel per output channel) as one np.einsum over
channels-last rows.

A depthwise 3x3 has 9 multiply-adds per output: far too few for a matrix product to
pay for building its im2col matrix, so the work is a multiply-add per kernel tap over
whole rows of outputs. numpy has no fused multiply-add ufunc, but np.einsum's
contiguous sum-of-products loop is one: out[k] += a[k] * b[k] in a single pass, with
no temporary. The layout makes every operand of that loop one long contiguous run:

- the input is channels-last, (h, w, c), padded, so output row y of tap (i, j) reads
  the contiguous run of ow*c floats starting at padded row y*sh + i*dh, column j*dw
  (stride 1). With a column stride the taps' columns are first copied out, one
  (h, ow, c) plane per kernel column j (padded column x*sw + j*dw at x), so each tap
  again reads contiguous runs;
- the weights are "tiled": tap (i, j)'s c channel weights repeated ow times, an
  (ow*c) row matching an output row element for element (made once per output
  width and kept by the caller).

np.einsum("ijyn,ijn->yn") then iterates output rows outermost and the taps inside,
so an output row (ow*c floats, a few KiB) stays in L1 while all taps accumulate
into it. Measured against the previous kernels (per-tap multiply and add on planar
blocks, or an einsum over the channel axis alone), one thread, bias and ReLU fused,
channels-last input: 72 channels 56x56 3x3 0.69 -> 0.42 ms; 64 at 112x112 3x3
stride 2 0.95 -> 0.55 ms; 120 at 28x28 5x5 0.68 -> 0.38 ms; 58 at 28x28 3x3
0.26 -> 0.10 ms; 672 at 14x14 5x5 0.71 -> 0.53 ms.

The result is returned channels-last too: a (c, oh, ow) transposed view of the
(oh, ow, c) buffer (numpy code handles any strides; a transposing copy would cost
as much as a third of the convolution). A planar input is transposed while it is
padded, which is slow for large planes with a stride (64 channels of 112x112,
stride 2: 1.5 ms, against 0.55 ms from channels-last and 0.95 ms for the former
planar kernel); the matrix-product convolutions that feed depthwise ones therefore
write channels-last (vkncnn/channels_last.py), which covers every depthwise layer of
the MobileNets and all but three small ones of ShuffleNetV2.

One thread: splitting the output rows over two (numpy releases the GIL inside einsum)
measured no faster in whole models (MobileNetV3 15.3 ms threaded from 2M multiply-adds
up, 14.9 ms never threaded; 2 threads, interleaved with ncnn as `vkncnn bench` runs), and
copying the tap planes in blocks of rows to keep them in the L2 cache cost more numpy
calls than it saved (MobileNetV2 11% slower with 512 KiB blocks).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided


def depthwise_conv2d(x: np.ndarray, taps: np.ndarray, kernel_hw, stride_hw, dilation_hw,
                     pads: tuple[int, int, int, int], pad_value: float = 0.0,
                     bias: np.ndarray | None = None,
                     activation: Callable[[np.ndarray], None] | None = None,
                     tiles: dict | None = None) -> np.ndarray:
    """Depthwise convolution of an unpadded (c, h, w) float32 input (any strides).

    taps: (kh*kw, c) float32, the weight of tap (i, j) for every channel at row i*kw + j.
    pads: (top, bottom, left, right); a negative amount crops. `activation(block)`
    applies the fused activation in place. `tiles`: a dict the caller keeps between
    calls with the same taps and bias, where the tiled weight rows are kept per output
    width. Returns a new (c, oh, ow) float32 array, channels-last in memory.
    """
    c, h, w = x.shape
    top, bottom, left, right = pads
    if min(pads) < 0:  # crop first, then pad with what is left
        x = x[:, max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
        c, h, w = x.shape
        top, bottom, left, right = (max(v, 0) for v in pads)
    kh, kw = kernel_hw
    sh, sw = stride_hw
    dh, dw = dilation_hw
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"kernel extent does not fit the padded input {h + top + bottom}x{w + left + right}")
    tiled = None if tiles is None else tiles.get(ow)
    if tiled is None:
        tiled = tile_weights(taps, bias, kh, kw, ow)
        if tiles is not None:
            tiles[ow] = tiled
    weights, bias_row = tiled
    windows = tap_windows(x.transpose(1, 2, 0), (kh, kw, sh, sw, dh, dw, top, left, oh, ow), pad_value)
    out = np.einsum("ijyn,ijn->yn", windows, weights)
    if bias_row is not None:
        np.add(out, bias_row, out=out)
    if activation is not None:
        activation(out)
    return out.reshape(oh, ow, c).transpose(2, 0, 1)


def tap_windows(x: np.ndarray, geometry, pad_value: float) -> np.ndarray:
    """(kh, kw, oh, ow*c) view: [i, j, y] is the contiguous run of input that output row
    y of tap (i, j) multiplies. x: the unpadded input as (h, w, c).

    Stride 1: one plane, the padded input itself; tap column j starts j*dw pixels
    further along a row. Column stride sw: one plane per kernel column j, holding the
    padded columns x*sw + j*dw at x, so every tap still reads contiguous runs.
    """
    kh, kw, sh, sw, dh, dw, top, left, oh, ow = geometry
    c = x.shape[2]
    hp = (oh - 1) * sh + (kh - 1) * dh + 1        # padded rows that are read
    if sw == 1:
        planes = _padded_columns(x, hp, ow + (kw - 1) * dw, 1, [0], top, left, pad_value)
        tap_step = dw * c
    else:
        planes = _padded_columns(x, hp, ow, sw, [j * dw for j in range(kw)], top, left, pad_value)
        tap_step = ow * c
    row = planes.strides[0]
    item = planes.itemsize
    return as_strided(planes, (kh, kw, oh, ow * c), (dh * row, tap_step * item, sh * row, item),
                      writeable=False)


def _padded_columns(x: np.ndarray, hp: int, width: int, step: int, firsts: list[int], top: int, left: int,
                    pad_value: float) -> np.ndarray:
    """(hp, len(firsts), width, c): plane k holds padded rows 0..hp-1 and padded columns
    firsts[k] + u*step for u < width, pad_value outside the input. One copy of the input
    per plane (a transposing one when x views a planar array)."""
    h, w, c = x.shape
    out = np.empty((hp, len(firsts), width, c), np.float32)
    r0, r1 = min(top, hp), min(top + h, hp)        # rows of out inside the input
    out[:r0] = pad_value
    out[r1:] = pad_value
    for k, first in enumerate(firsts):
        u0, u1 = _inside(width, w, first - left, step)
        out[r0:r1, k, :u0] = pad_value
        out[r0:r1, k, u1:] = pad_value
        if u1 > u0:
            s0 = u0 * step + first - left
            out[r0:r1, k, u0:u1] = x[:r1 - r0, s0:s0 + (u1 - u0 - 1) * step + 1:step]
    return out


def _inside(count: int, size: int, first: int, step: int) -> tuple[int, int]:
    """[lo, hi) of u in [0, count) with 0 <= first + u*step < size."""
    lo = min(count, max(0, -(first // step)))  # ceil(-first / step)
    hi = min(count, (size - 1 - first) // step + 1) if size - 1 - first >= 0 else 0
    return lo, max(lo, hi)


def tile_weights(taps: np.ndarray, bias: np.ndarray | None, kh: int, kw: int, ow: int):
    """(weights (kh, kw, ow*c), bias row (ow*c) or None): each tap's channel weights, and
    the bias, repeated along an output row of ow pixels."""
    c = taps.shape[1]
    weights = np.ascontiguousarray(np.broadcast_to(taps.reshape(kh, kw, 1, c), (kh, kw, ow, c)))
    bias_row = None if bias is None else np.tile(np.asarray(bias, np.float32), ow)
    return weights.reshape(kh, kw, ow * c), bias_row
