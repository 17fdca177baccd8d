"""Depthwise convolution (one input channel per output channel) as one np.einsum over
channels-last rows.

A depthwise 3x3 has 9 multiply-adds per output: far too few for a matrix product to
pay for building its im2col matrix, so the work is a multiply-add per kernel tap over
whole rows of outputs. numpy has no fused multiply-add ufunc, but np.einsum's
contiguous sum-of-products loop is one: out[k] += a[k] * b[k] in a single pass, with
no temporary. The layout makes every operand of that loop one long contiguous run:

- the input is channels-last, (h, w, c), padded, so output row y of tap (i, j) reads
  the contiguous run of ow*c floats starting at padded row y*sh + i*dh, column j*dw
  (stride 1). With a column stride sw the input's columns are first copied out by
  phase, one plane per residue (j*dw) % sw (padded column x*sw + first at x), so each
  tap again reads contiguous runs: with stride 2 the even columns serve taps 0, 2, 4
  and the odd ones taps 1, 3, each tap a run that starts one pixel further along;
- the weights are "tiled": tap (i, j)'s c channel weights repeated ow times, an
  (ow*c) row matching an output row element for element (made once per output
  width and kept by the caller).

np.einsum("ijyn,ijn->yn") then iterates output rows outermost and the taps inside,
so an output row (ow*c floats, a few KiB) stays in L1 while all taps accumulate
into it; with a stride, one einsum per phase, added up.

This beat the previous kernels (per-tap multiply and add on planar blocks, or an
einsum over the channel axis alone) on every shape measured (figures:
docs/perf-notes.md, "Depthwise convolution: one einsum over channels-last rows").

The result is returned channels-last too: a (c, oh, ow) transposed view of the
(oh, ow, c) buffer (numpy code handles any strides; a transposing copy would cost
as much as a third of the convolution). A planar input is transposed while it is
padded, which is slow for large planes with a stride (slower than the former planar
kernel: docs/perf-notes.md, "Depthwise convolution: channels-last producers"); the
matrix-product convolutions that feed depthwise ones therefore write channels-last
(vkncnn/channels_last.py), which covers every depthwise layer of the MobileNets and
all but three small ones of ShuffleNetV2.

Planes per phase rather than one per kernel column copy 2 planes instead of 3 (3x3)
or 5 (5x5) at stride 2, for one more pass over the (4x smaller) output; the depthwise
layers measured in MobileNetV2 and MobileNetV3 got faster in whole models (figures:
docs/perf-notes.md, "Depthwise convolution: planes per column phase").

One thread: splitting the output rows over two (numpy releases the GIL inside einsum)
measured no faster in whole models, and copying the tap planes in blocks of rows to keep
them in the L2 cache cost more numpy calls than it saved (figures: docs/perf-notes.md,
"Depthwise convolution: one thread, no row blocks (not adopted)").
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

# tiled weight rows up to this many floats are kept between calls (4 MiB; MobileNets' largest
# is 9 taps x 112 pixels x 64 channels = 65K floats); larger ones are rebuilt per call, which
# costs one pass over them against the oh passes of the convolution itself
TILE_CACHE_FLOATS = 1 << 20


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
    phases = column_phases(kw, sw, dw)
    tiled = None if tiles is None else tiles.get(ow)
    if tiled is None:
        tiled = tile_weights(taps, bias, kh, kw, ow, phases)
        if tiles is not None and kh * kw * ow * taps.shape[1] <= TILE_CACHE_FLOATS:
            # one width kept per layer, and only a small one: a net fed ever-changing widths,
            # or very wide ones, would otherwise keep k*k*ow*c floats per layer and width
            tiles.clear()
            tiles[ow] = tiled
    weights, bias_row = tiled
    windows = tap_windows(x.transpose(1, 2, 0), (kh, sh, sw, dh, dw, top, left, oh, ow), phases, pad_value)
    out = np.einsum("ijyn,ijn->yn", windows[0], weights[0])
    for more in zip(windows[1:], weights[1:]):
        np.add(out, np.einsum("ijyn,ijn->yn", *more), out=out)
    if bias_row is not None:
        np.add(out, bias_row, out=out)
    if activation is not None:
        activation(out)
    return out.reshape(oh, ow, c).transpose(2, 0, 1)


def column_phases(kw: int, sw: int, dw: int) -> list[range]:
    """The kernel columns grouped by the phase (j*dw) % sw of the input columns they read.

    Columns j and j + sw/gcd(sw, dw) share a phase and read runs dw/gcd(sw, dw) output
    pixels apart. Stride 1: one group, all columns."""
    step = sw // math.gcd(sw, dw)
    return [range(j0, kw, step) for j0 in range(min(step, kw))]


def tap_windows(x: np.ndarray, geometry, phases: list[range], pad_value: float) -> list[np.ndarray]:
    """Per phase, a (kh, len(phase), oh, ow*c) view: [i, k, y] is the contiguous run of
    input that output row y of tap (i, phase[k]) multiplies. x: the unpadded input as
    (h, w, c).

    The phase of first column j0 is a plane of the padded columns x*sw + j0*dw, x <
    ow plus the runs' spread (stride 1: the padded input itself); its k-th tap starts
    k*dw/gcd(sw, dw) pixels further along a row.
    """
    kh, sh, sw, dh, dw, top, left, oh, ow = geometry
    c = x.shape[2]
    hp = (oh - 1) * sh + (kh - 1) * dh + 1        # padded rows that are read
    spread = dw // math.gcd(sw, dw)               # pixels between the runs of a phase's taps
    width = ow + (max(len(p) for p in phases) - 1) * spread
    planes = _padded_columns(x, hp, width, sw, [p[0] * dw for p in phases], top, left, pad_value)
    row = planes.strides[0]
    item = planes.itemsize
    return [as_strided(planes[:, k], (kh, len(p), oh, ow * c), (dh * row, spread * c * item, sh * row, item),
                       writeable=False) for k, p in enumerate(phases)]


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


def tile_weights(taps: np.ndarray, bias: np.ndarray | None, kh: int, kw: int, ow: int, phases: list[range]):
    """(weights, bias row (ow*c) or None): per phase, its taps' channel weights as
    (kh, len(phase), ow*c), and the bias, repeated along an output row of ow pixels."""
    c = taps.shape[1]
    grid = taps.reshape(kh, kw, 1, c)
    weights = [np.ascontiguousarray(np.broadcast_to(grid[:, p.start:p.stop:p.step], (kh, len(p), ow, c)))
               .reshape(kh, len(p), ow * c) for p in phases]
    bias_row = None if bias is None else np.tile(np.asarray(bias, np.float32), ow)
    return weights, bias_row
