"""Depthwise convolution (one input channel per output channel) as vectorised multiply-adds.

A depthwise 3x3 has 9 multiply-adds per output: far too few for a matrix product to
pay for building its im2col matrix, so the work is a multiply-add over a whole block
of outputs per kernel tap. numpy then runs at memory speed, so what matters is (1)
every operand being a contiguous run of floats, (2) nothing allocated per tap, and
(3) the blocks staying in the L2 cache. Two layouts give that:

- planar, (c, h, w), for large planes. The padded plane is flattened; output (y, x)
  is computed at flat index y*Wq + x of the padded-width grid, where tap (i, j)
  reads flat index y*Wq + x + i*Wq + j, so a tap's whole window is ONE contiguous
  slice; each tap is a multiply into a scratch block and an add into the
  accumulator. The Wq - ow extra columns per row are computed and dropped. With a
  stride the input is first split into stride_h*stride_w "phases" (every s-th row
  and column from an offset), in which every tap is again a contiguous slice.
- channels-last, (h, w, c), for small planes with many channels: a tap is a strided
  (oh, ow, c) view whose inner axis is a contiguous run of c channels, and the taps'
  weights are contiguous along c too; np.einsum then multiplies and accumulates all
  taps in one pass (its contiguous sum-of-products loop is a fused multiply-add).
  With the weight a per-row scalar, as in the planar layout, einsum is 6x slower
  than separate multiplies and adds, so only this layout uses it.

Blocks of about BLOCK floats keep the accumulator, a scratch buffer and the input
window in cache; bias and the fused activation are applied to each block while it
is still there. Large layers spread their blocks over opt.num_threads threads
(parallel.py: numpy releases the GIL inside each call).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .parallel import for_each_block

# floats per block: accumulator and scratch fill a 1 MiB L2 cache (measured: 64K-float
# blocks are 10-20% slower, as each numpy call's fixed cost counts more; 1M-float ones
# spill to L3)
BLOCK = 131072
MIN_BLOCK = 16384
# multiply-adds (outputs x taps) from which a layer is split over threads
PARALLEL_TAPS = 1 << 21


def depthwise_conv2d(x: np.ndarray, taps: np.ndarray, kernel_hw, stride_hw, dilation_hw,
                     pads: tuple[int, int, int, int], pad_value: float = 0.0,
                     bias: np.ndarray | None = None,
                     activation: Callable[[np.ndarray], None] | None = None, threads: int = 1) -> np.ndarray:
    """Depthwise convolution of an unpadded (c, h, w) float32 input.

    taps: (kh*kw, c) float32, the weight of tap (i, j) for every channel at row i*kw + j.
    pads: (top, bottom, left, right); a negative amount crops. `activation(block)`
    applies the fused activation in place. Blocks are spread over `threads` threads.
    Returns a new (c, oh, ow) float32 array.
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
    geometry = (kh, kw, sh, sw, dh, dw, top, left, oh, ow)
    if c * oh * ow * kh * kw < PARALLEL_TAPS:
        threads = 1  # too little work to pay for waking a second thread (~40 us)
    if use_channels_last(c, oh, ow):
        return _channels_last(x, taps, geometry, pad_value, bias, activation, threads)
    return _planar(x, taps, geometry, pad_value, bias, activation, threads)


def use_channels_last(channels: int, oh: int, ow: int) -> bool:
    """Channels-last unless the plane is large next to the channel count. Measured on
    the benchmark models' shapes (one thread): planar wins from about 20 output pixels
    per channel (144 channels at 56x56: 2.1 vs 2.3 ms; 24 at 80x80 stride 2: 0.45 vs
    0.58 ms), channels-last below (96 channels at 40x40: 1.0 vs 3.1 ms)."""
    return channels * 20 >= oh * ow


# -- planar layout ------------------------------------------------------------------------
def phase_planes(x: np.ndarray, geometry, pad_value: float):
    """The padded input split into stride phases, flattened, for contiguous tap windows.

    Phase (p, q) holds padded rows p, p+sh, ... and columns q, q+sw, ... as a
    (hq, wq) plane, hq = oh + (kh-1)*dh // sh, wq = ow + (kw-1)*dw // sw. Tap (i, j)
    then reads phase ((i*dh) % sh, (j*dw) % sw) shifted by ((i*dh) // sh, (j*dw) // sw),
    i.e. output grid index y*wq + x of that tap is flat index y*wq + x + offset.
    Returns (planes (c, phases, hq*wq), [(phase, offset) per tap], hq, wq). Stride 1 is
    the single phase: the padded plane itself.
    """
    kh, kw, sh, sw, dh, dw, top, left, oh, ow = geometry
    c = x.shape[0]
    hq = oh + (kh - 1) * dh // sh
    wq = ow + (kw - 1) * dw // sw
    phase_of: dict[tuple[int, int], int] = {}
    tap_slices = []
    for i in range(kh):
        for j in range(kw):
            p, q = (i * dh) % sh, (j * dw) % sw
            k = phase_of.setdefault((p, q), len(phase_of))
            tap_slices.append((k, (i * dh) // sh * wq + (j * dw) // sw))
    planes = np.empty((c, len(phase_of), hq * wq), np.float32)
    for (p, q), k in phase_of.items():
        _fill_phase(planes[:, k].reshape(c, hq, wq), x, p, q, sh, sw, top, left, pad_value)
    return planes, tap_slices, hq, wq


def _planar(x, taps, geometry, pad_value, bias, activation, threads) -> np.ndarray:
    oh, ow = geometry[8], geometry[9]
    c = x.shape[0]
    planes, tap_slices, _, wq = phase_planes(x, geometry, pad_value)

    n = (oh - 1) * wq + ow                      # grid indices that hold real outputs
    acc = np.empty((c, oh * wq), np.float32)
    out = np.empty((c, oh, ow), np.float32)
    cb = max(1, _block_floats(c * n, threads) // n)   # channels per block
    nb = n if cb > 1 else min(n, BLOCK)          # grid indices per step (huge planes)
    columns = taps[:, :, None]                   # (taps, c, 1): one weight per channel row

    def make():
        scratch = np.empty(min(c, cb) * nb, np.float32)

        def run(block: int) -> None:
            c0 = block * cb
            c1 = min(c, c0 + cb)
            for n0 in range(0, n, nb):
                n1 = min(n, n0 + nb)
                dst = acc[c0:c1, n0:n1]
                tmp = scratch[:(c1 - c0) * (n1 - n0)].reshape(c1 - c0, n1 - n0)
                for t, (k, off) in enumerate(tap_slices):
                    src = planes[c0:c1, k, off + n0:off + n1]
                    if t == 0:
                        np.multiply(src, columns[t, c0:c1], out=dst)
                    else:
                        np.multiply(src, columns[t, c0:c1], out=tmp)
                        np.add(dst, tmp, out=dst)
            grid = acc[c0:c1].reshape(c1 - c0, oh, wq)[:, :, :ow]
            _finish(out[c0:c1], grid, None if bias is None else bias[c0:c1, None, None], activation)

        return run

    for_each_block(-(-c // cb), threads, make)
    return out


def _fill_phase(dst: np.ndarray, x: np.ndarray, p: int, q: int, sh: int, sw: int, top: int, left: int,
                pad_value: float) -> None:
    """dst[:, y, x] = padded input at row y*sh + p, column x*sw + q (pad_value outside x)."""
    _, hq, wq = dst.shape
    h, w = x.shape[1:]
    y0, y1 = _inside(hq, h, p - top, sh)
    x0, x1 = _inside(wq, w, q - left, sw)
    if y1 <= y0 or x1 <= x0:
        dst[...] = pad_value
        return
    dst[:, :y0] = pad_value
    dst[:, y1:] = pad_value
    dst[:, y0:y1, :x0] = pad_value
    dst[:, y0:y1, x1:] = pad_value
    r0, s0 = y0 * sh + p - top, x0 * sw + q - left
    dst[:, y0:y1, x0:x1] = x[:, r0:r0 + (y1 - y0 - 1) * sh + 1:sh, s0:s0 + (x1 - x0 - 1) * sw + 1:sw]


def _inside(count: int, size: int, first: int, step: int) -> tuple[int, int]:
    """[lo, hi) of k in [0, count) with 0 <= first + k*step < size."""
    lo = max(0, -(first // step))  # ceil(-first / step)
    hi = min(count, (size - 1 - first) // step + 1) if size - 1 - first >= 0 else 0
    return lo, max(lo, hi)


# -- channels-last layout -------------------------------------------------------------------
def _channels_last(x, taps, geometry, pad_value, bias, activation, threads) -> np.ndarray:
    kh, kw, sh, sw, dh, dw, top, left, oh, ow = geometry
    c, h, w = x.shape
    hp = max(top + h, (oh - 1) * sh + (kh - 1) * dh + 1)
    wp = max(left + w, (ow - 1) * sw + (kw - 1) * dw + 1)
    xp = np.empty((hp, wp, c), np.float32)
    if top or left or hp > top + h or wp > left + w:
        xp[:top] = pad_value
        xp[top + h:] = pad_value
        xp[top:top + h, :left] = pad_value
        xp[top:top + h, left + w:] = pad_value
    xp[top:top + h, left:left + w] = x.transpose(1, 2, 0)

    acc = np.empty((oh, ow, c), np.float32)
    # one block unless threads share the work: einsum is one call per block anyway
    rb = oh if threads <= 1 else max(1, _block_floats(oh * ow * c, threads) // (ow * c))
    out = np.empty((c, oh, ow), np.float32)
    bias_planes = None if bias is None else bias[:, None, None]
    weights = taps.reshape(kh, kw, c)
    s0, s1, s2 = xp.strides

    def make():
        def run(block: int) -> None:
            y0 = block * rb
            y1 = min(oh, y0 + rb)
            # (kh, kw, rows, ow, c) windows; einsum multiplies and accumulates every tap in
            # one pass with contiguous channel runs (a fused multiply-add, no temporaries)
            windows = as_strided(xp[y0 * sh:], (kh, kw, y1 - y0, ow, c),
                                 (dh * s0, dw * s1, sh * s0, sw * s1, s2), writeable=False)
            dst = acc[y0:y1]
            np.einsum("ijhwc,ijc->hwc", windows, weights, out=dst)
            _finish(out[:, y0:y1], dst.transpose(2, 0, 1), bias_planes, activation)

        return run

    for_each_block(-(-oh // rb), threads, make)
    return out


def _block_floats(total: int, threads: int) -> int:
    """Block size: BLOCK, but small enough that every thread gets a block (never below
    MIN_BLOCK, where a numpy call's fixed cost would dominate)."""
    if threads <= 1:
        return BLOCK
    return max(MIN_BLOCK, min(BLOCK, total // threads))


def _finish(out: np.ndarray, acc: np.ndarray, bias, activation) -> None:
    """out = activation(acc + bias), written into `out`."""
    if bias is None:
        np.copyto(out, acc)
    else:
        np.add(acc, bias, out=out)
    if activation is not None:
        activation(out)
