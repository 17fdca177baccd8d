"""2-D pooling kernels (ncnn's Pooling layer) on (c, h, w) float32 arrays.

Three flavours, as in ncnn:
- global: one max / mean per channel;
- adaptive: PyTorch's AdaptiveMax/AvgPool2d bins, [floor(i*h/out), ceil((i+1)*h/out));
- windowed: pad, then slide a kh x kw window with strides. The padding modes are
  ncnn's: 0 "full" (Caffe ceil mode: extra tail padding on the right/bottom so the last
  window covers the input), 1 "valid" (explicit pads only), 2 SAME_UPPER, 3 SAME_LOWER.

Windowed pooling loops over the kernel taps (kh + kw whole-tensor passes), never over pixels.
"""

from __future__ import annotations

import numpy as np

from .conv import place_in_border, same_crop_quirk
from .shape import PAD_CONSTANT, pad_last_axes

FLT_MAX = np.float32(np.finfo(np.float32).max)

POOL_MAX = 0
POOL_AVG = 1


def global_pool(x: np.ndarray, pooling_type: int) -> np.ndarray:
    """(c, h, w) -> (c,): the max or the mean of each channel."""
    flat = x.reshape(x.shape[0], -1)
    if pooling_type == POOL_MAX:
        return flat.max(axis=1)
    # the sums as one matrix-vector product: float32 sums as ncnn's, and fast in any layout,
    # where numpy's float64 sum along the strided pixel axis of a channels-last input (a
    # depthwise result, as in MobileNetV3's squeeze-excitation blocks) took several times
    # longer (figures: docs/perf-notes.md, "Global average pooling as a matrix-vector product")
    sums = np.matmul(flat, np.ones(flat.shape[1], np.float32))
    return (sums / np.float32(flat.shape[1])).astype(np.float32, copy=False)


def _bins(size: int, out: int) -> list[tuple[int, int]]:
    """Adaptive pooling bins: [floor(i*size/out), ceil((i+1)*size/out)) for each output i."""
    return [((size * i) // out, -((-size * (i + 1)) // out)) for i in range(out)]


def adaptive_pool(x: np.ndarray, pooling_type: int, out_h: int, out_w: int) -> np.ndarray:
    """(c, h, w) -> (c, out_h, out_w). Both max and sum are separable over a rectangle,
    so rows are reduced first (one loop over out_h), then columns (one loop over out_w)."""
    h, w = x.shape[1:]
    reduce = np.max if pooling_type == POOL_MAX else np.sum
    hb, wb = _bins(h, out_h), _bins(w, out_w)
    rows = np.stack([reduce(x[:, a:b, :], axis=1) for a, b in hb], axis=1)       # (c, out_h, w)
    out = np.stack([reduce(rows[:, :, a:b], axis=2) for a, b in wb], axis=2)     # (c, out_h, out_w)
    if pooling_type == POOL_MAX:
        return out.astype(np.float32, copy=False)
    hk = np.array([b - a for a, b in hb], np.float32)[:, None]
    wk = np.array([b - a for a, b in wb], np.float32)[None, :]
    return (out / hk / wk).astype(np.float32, copy=False)


def pooling_pads(h: int, w: int, kernel: tuple[int, int], stride: tuple[int, int],
                 pads: tuple[int, int, int, int], pad_mode: int) -> tuple[int, int, int, int]:
    """The (top, bottom, left, right) border ncnn's make_padding adds, tail padding included."""
    kh, kw = kernel
    sh, sw = stride
    top, bottom, left, right = pads
    if pad_mode == 0:  # full: grow the tail so (size - k) is a multiple of the stride
        htail = _c_mod(h + top + bottom - kh, sh)
        wtail = _c_mod(w + left + right - kw, sw)
        return (top, bottom + (sh - htail if htail else 0), left, right + (sw - wtail if wtail else 0))
    if pad_mode == 1:  # valid: the explicit pads only
        return (top, bottom, left, right)
    # SAME: out = ceil(in / stride); the odd pixel goes after (2, UPPER) or before (3, LOWER)
    hpad = kh + (h - 1) // sh * sh - h
    wpad = kw + (w - 1) // sw * sw - w
    if hpad <= 0 and wpad <= 0:
        return (0, 0, 0, 0)
    # ncnn pads both axes together, so a negative amount on one axis (kernel < stride)
    # is passed on and crops (conv.same_crop_quirk); halves use C's truncating division
    hh, wh = int(hpad / 2), int(wpad / 2)
    if pad_mode == 2:
        return same_crop_quirk(hpad, (hh, hpad - hh, wh, wpad - wh))
    return same_crop_quirk(hpad, (hpad - hh, hh, wpad - wh, wh))


def _c_mod(a: int, b: int) -> int:
    """C's %: the remainder takes the dividend's sign (a kernel larger than the input
    makes the dividend negative, and ncnn then pads by more than one stride)."""
    return a - b * int(a / b)


def window_pool(x: np.ndarray, pooling_type: int, kernel: tuple[int, int], stride: tuple[int, int],
                pads: tuple[int, int, int, int], pad_mode: int, count_include_pad: bool) -> np.ndarray:
    """(c, h, w) -> (c, out_h, out_w) max or average pooling with ncnn's padding rules.

    `pads` are the layer params (top, bottom, left, right). Average pooling with
    count_include_pad=0 averages the taps inside the region that ncnn considers real:
    the bordered tensor minus the *param* pads and the full-mode tail. ncnn uses the
    param pads there even in SAME modes, whose real border differs: real pixels under
    the param pads are then skipped and automatic padding is averaged in. Kept so.
    """
    h, w = x.shape[1:]
    kh, kw = kernel
    sh, sw = stride
    border = pooling_pads(h, w, kernel, stride, pads, pad_mode)
    pad_value = -FLT_MAX if pooling_type == POOL_MAX else np.float32(0)
    top, bottom, left, right = border
    if min(border) >= 0:
        xp = place_in_border(x, top, bottom, left, right, pad_value) if any(border) else x
    else:  # SAME with a kernel smaller than the stride: negative amounts crop
        xp = pad_last_axes(x, [(top, bottom), (left, right)], PAD_CONSTANT, pad_value)
    H, W = xp.shape[1:]
    out_h = (H - kh) // sh + 1
    out_w = (W - kw) // sw + 1
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"pooling window {kh}x{kw} does not fit the padded input {H}x{W}")

    exclude_pad = pooling_type == POOL_AVG and not count_include_pad
    if exclude_pad:
        # ncnn sums and counts only the taps inside [pad_top, H - pad_bottom - tail) x
        # [pad_left, W - pad_right - tail), with the *param* pads even in SAME modes
        # (where the real border differs): zero what lies outside, count what lies in.
        top, bottom, left, right = pads
        tail_h = border[1] - bottom if pad_mode == 0 else 0
        tail_w = border[3] - right if pad_mode == 0 else 0
        row_lo, row_hi = top, H - bottom - tail_h
        col_lo, col_hi = left, W - right - tail_w
        if row_lo > 0 or row_hi < H or col_lo > 0 or col_hi < W:
            if xp is x:
                xp = xp.copy()  # never write into the input
            xp[:, :max(0, row_lo)] = 0
            xp[:, max(0, row_hi):] = 0
            xp[:, :, :max(0, col_lo)] = 0
            xp[:, :, max(0, col_hi):] = 0

    reduce = np.maximum if pooling_type == POOL_MAX else np.add
    acc = _separable_pool(np.ascontiguousarray(xp), kernel, stride, (out_h, out_w), reduce)
    if pooling_type == POOL_MAX:
        return acc
    if not exclude_pad:
        return acc / np.float32(kh * kw)
    rows = _taps_inside(out_h, kh, sh, row_lo, row_hi)
    cols = _taps_inside(out_w, kw, sw, col_lo, col_hi)
    area = (rows[:, None] * cols[None, :]).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return acc / area


def _separable_pool(xp: np.ndarray, kernel, stride, out_hw, reduce) -> np.ndarray:
    """out[c, y, x] = reduce over the kh x kw window at (y*sh, x*sw) of a contiguous
    padded (c, H, W) array.

    Max and sum are separable: the kh row taps first (with a row stride this halves
    the data before the columns), then the kw column taps: kh + kw passes instead of
    kh * kw. Each pass runs over the whole flattened tensor where it can: column tap t
    of position p is flat element p + t, row tap i (stride 1) is p + i*W; the few
    positions whose window wraps past a row or plane end are computed and never read.
    Long contiguous runs keep numpy in its SIMD loops, where slicing per row leaves
    inner loops of one row's length, which measured slower with and without a stride
    (figures: docs/perf-notes.md, "Pooling: rows then columns over the flattened tensor").
    """
    kh, kw = kernel
    sh, sw = stride
    out_h, out_w = out_hw
    c, H, W = xp.shape
    if sh == 1:  # rows from out_h on are computed and not read
        rows = _shifted_reduce(xp.reshape(-1), kh, W, reduce).reshape(c, H, W)
    else:
        rows = _strided_reduce(xp, kh, sh, out_h, 1, reduce)
    # columns by flat shifts even with a column stride: strided loops over only the
    # outputs measured slower than contiguous ones over every start position (figures:
    # docs/perf-notes.md, "Pooling: rows then columns over the flattened tensor")
    cols = _shifted_reduce(rows.reshape(-1), kw, 1, reduce).reshape(rows.shape)
    return np.ascontiguousarray(cols[:, :out_h, :sw * (out_w - 1) + 1:sw])


def _strided_reduce(a: np.ndarray, k: int, s: int, n: int, axis: int, reduce) -> np.ndarray:
    """New array: out[.., i, ..] = reduce over t < k of a[.., i*s + t, ..] along `axis`, i < n
    (the first two taps reduced straight into it: no copy)."""
    def tap(t):
        index = [slice(None)] * a.ndim
        index[axis] = slice(t, t + s * (n - 1) + 1, s)
        return a[tuple(index)]

    if k == 1:
        return np.array(tap(0), copy=True)
    out = reduce(tap(0), tap(1))
    for t in range(2, k):
        reduce(out, tap(t), out=out)
    return out


def _shifted_reduce(flat: np.ndarray, k: int, step: int, reduce) -> np.ndarray:
    """r[p] = reduce over t < k of flat[p + t*step], for every p whose taps are all inside;
    the last (k-1)*step elements of r, where no window that is read starts, are 0."""
    n = flat.size - (k - 1) * step
    out = np.empty_like(flat)
    out[n:] = 0
    if k == 1:
        np.copyto(out, flat)
        return out
    reduce(flat[:n], flat[step:step + n], out=out[:n])
    for t in range(2, k):
        reduce(out[:n], flat[t * step:t * step + n], out=out[:n])
    return out


def _taps_inside(n_out: int, k: int, s: int, lo: int, hi: int) -> np.ndarray:
    """For each output index, how many of its k taps fall in [lo, hi) of the padded axis."""
    start = np.arange(n_out) * s
    return np.clip(np.minimum(start + k, hi) - np.maximum(start, lo), 0, None)
