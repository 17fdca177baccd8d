"""3-D pooling kernels (ncnn's Pooling3D) on (c, d, h, w) float32 arrays.

The same three flavours and padding rules as the 2-D kernels of pooling.py, on one more
axis: global (max / mean per channel), adaptive (PyTorch's bins per axis) and windowed
(pad_mode 0 full with tail padding, 1 valid, 2 SAME_UPPER, 3 SAME_LOWER). Max and sum
are separable over a box, so a window is reduced one axis at a time: kd + kh + kw
whole-tensor passes, never a loop over voxels.
"""

from __future__ import annotations

import numpy as np

from .pooling import FLT_MAX, POOL_MAX, _bins, _c_mod, _strided_reduce, _taps_inside
from .shape import PAD_CONSTANT, pad_last_axes


def global_pool3d(x: np.ndarray, pooling_type: int) -> np.ndarray:
    """(c, d, h, w) -> (c,)."""
    flat = x.reshape(x.shape[0], -1)
    if pooling_type == POOL_MAX:
        return flat.max(axis=1)
    return (flat.sum(axis=1, dtype=np.float64) / flat.shape[1]).astype(np.float32)


def adaptive_pool3d(x: np.ndarray, pooling_type: int, out_size) -> np.ndarray:
    """(c, d, h, w) -> (c, out_d, out_h, out_w), reducing one axis's bins at a time."""
    reduce = np.max if pooling_type == POOL_MAX else np.sum
    y = x
    counts = np.ones((1, 1, 1), np.float32)
    for axis, out in zip((1, 2, 3), out_size):
        bins = _bins(y.shape[axis], out)
        y = np.stack([reduce(np.take(y, range(a, b), axis=axis), axis=axis) for a, b in bins], axis=axis)
        shape = [1, 1, 1]
        shape[axis - 1] = out
        counts = counts * np.array([b - a for a, b in bins], np.float32).reshape(shape)
    if pooling_type == POOL_MAX:
        return y.astype(np.float32, copy=False)
    return (y / counts).astype(np.float32, copy=False)


def pooling3d_pads(sizes, kernel, stride, pads, pad_mode: int) -> list[tuple[int, int]]:
    """(before, after) per axis that ncnn borders the input with, tail padding included.
    `pads`: ((front, behind), (top, bottom), (left, right)) as the params give them."""
    if pad_mode == 0:  # full: grow the tail so (size - k) is a multiple of the stride
        out = []
        for n, k, s, (b, a) in zip(sizes, kernel, stride, pads):
            tail = _c_mod(n + b + a - k, s)
            out.append((b, a + (s - tail if tail else 0)))
        return out
    if pad_mode == 1:
        return [tuple(p) for p in pads]
    amounts = [k + (n - 1) // s * s - n for n, k, s in zip(sizes, kernel, stride)]
    if all(a <= 0 for a in amounts):
        return [(0, 0)] * len(sizes)
    halves = [int(a / 2) for a in amounts]   # C division; a negative amount crops
    if pad_mode == 2:
        return [(h, a - h) for h, a in zip(halves, amounts)]
    # SAME_LOWER puts the larger half before on h and w, but ncnn's Pooling3D pads depth
    # the SAME_UPPER way (dpad / 2 in front): kept, so results match ncnn
    lower = [(a - h, h) for h, a in zip(halves, amounts)]
    return [(halves[0], amounts[0] - halves[0])] + lower[1:]


def window_pool3d(x: np.ndarray, pooling_type: int, kernel, stride, pads, pad_mode: int,
                  count_include_pad: bool) -> np.ndarray:
    """(c, d, h, w) -> (c, od, oh, ow) max or average pooling with ncnn's padding rules.

    Average pooling without count_include_pad counts only the taps inside the region ncnn
    considers real: the bordered volume minus the *param* pads and the full-mode tail
    (ncnn uses the param pads there even in SAME modes; kept so, as in pooling.py).
    """
    sizes = x.shape[1:]
    border = pooling3d_pads(sizes, kernel, stride, pads, pad_mode)
    fill = -FLT_MAX if pooling_type == POOL_MAX else np.float32(0)
    xp = pad_last_axes(x, border, PAD_CONSTANT, fill) if any(p for pair in border for p in pair) else x
    padded = xp.shape[1:]
    out_size = [(n - k) // s + 1 for n, k, s in zip(padded, kernel, stride)]
    if min(out_size) <= 0:
        raise ValueError(f"pooling window {tuple(kernel)} does not fit the padded input {tuple(padded)}")

    exclude_pad = pooling_type != POOL_MAX and not count_include_pad
    if exclude_pad:
        # zero what lies outside [before, size - after - tail) on each axis, count what lies in
        ranges = []
        for axis, ((b, a), (_, ba), n) in enumerate(zip(pads, border, padded), start=1):
            tail = ba - a if pad_mode == 0 else 0
            lo, hi = b, n - a - tail
            ranges.append((lo, hi))
            if lo > 0 or hi < n:
                xp = xp.copy() if xp is x else xp
                index = [slice(None)] * 4
                index[axis] = slice(0, max(0, lo))
                xp[tuple(index)] = 0
                index[axis] = slice(max(0, hi), None)
                xp[tuple(index)] = 0

    reduce = np.maximum if pooling_type == POOL_MAX else np.add
    acc = xp
    for axis, (k, s, n) in enumerate(zip(kernel, stride, out_size), start=1):
        acc = _strided_reduce(acc, k, s, n, axis, reduce)
    if pooling_type == POOL_MAX:
        return acc.astype(np.float32, copy=False)
    if not exclude_pad:
        return (acc / np.float32(np.prod(kernel))).astype(np.float32, copy=False)
    counts = [_taps_inside(n, k, s, lo, hi) for n, k, s, (lo, hi) in zip(out_size, kernel, stride, ranges)]
    area = (counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (acc / area).astype(np.float32, copy=False)
