"""Image resize kernels (ncnn's Interp): nearest, bilinear and bicubic on the last two axes.

Every method is separable: a per-axis table of source offsets and tap weights is built
once (`*_coeffs`), then applied along w and then along h as a few gathers and
multiply-adds, one per tap. The tables reproduce ncnn's arithmetic exactly: the source
coordinate is computed in double and rounded to float, `align_corner` maps corner to
corner, and bicubic (A = -0.75) folds the taps that fall outside the image back onto
the border by shifting weights, the way ncnn's cubic_coeffs does.

`scale` is the source step per output pixel: in/out when the output size was given,
1/scale_param when a scale was given (ncnn, like PyTorch, does not round it).
"""

from __future__ import annotations

import numpy as np

INT_MIN = -(2**31)


def _c_floor_to_int(v: np.ndarray) -> np.ndarray:
    """(int)floor(v) as x86 C code gives it: NaN and out-of-range values become INT_MIN."""
    v = np.asarray(v, np.float64)
    with np.errstate(invalid="ignore"):
        f = np.floor(v)
        ok = np.isfinite(f) & (f >= INT_MIN) & (f < 2**31)
        return np.where(ok, f, INT_MIN).astype(np.int64)


def _source_coords(in_size: int, out_size: int, align_corner: bool, scale: float) -> np.ndarray:
    """The float32 source coordinate of each output pixel, computed in double as ncnn does."""
    dx = np.arange(out_size, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if align_corner:
            # a single output pixel samples the first input pixel (what ncnn produces)
            scale = np.float64(in_size - 1) / np.float64(out_size - 1) if out_size > 1 else 0.0
            return (dx * scale).astype(np.float32)
        return ((dx + 0.5) * np.float64(scale) - 0.5).astype(np.float32)


def nearest_index(in_size: int, out_size: int, ratio: np.float32) -> np.ndarray:
    """Source index of each output pixel: min((int)(x * ratio), in_size - 1), in float32."""
    x = np.arange(out_size, dtype=np.float32) * np.float32(ratio)
    with np.errstate(invalid="ignore"):
        idx = np.where(np.isfinite(x), np.trunc(x), 0).astype(np.int64)
    return np.clip(idx, 0, in_size - 1)


def linear_coeffs(in_size: int, out_size: int, align_corner: bool, scale: float):
    """(offsets, weights[out, 2]): out = src[ofs] * w0 + src[ofs + 1] * w1."""
    fx = _source_coords(in_size, out_size, align_corner, scale)
    sx = _c_floor_to_int(fx)
    with np.errstate(invalid="ignore"):
        fx = (fx - sx.astype(np.float32)).astype(np.float32)
    low = sx < 0
    sx = np.where(low, 0, sx)
    fx = np.where(low, np.float32(0), fx)
    high = sx >= in_size - 1
    sx = np.where(high, in_size - 2, sx)
    fx = np.where(high, np.float32(1), fx)
    weights = np.stack([np.float32(1) - fx, fx], axis=1).astype(np.float32)
    return sx, weights


def _cubic_weights(fx: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution weights (A = -0.75) of the 4 taps around fx in [0, 1), float32."""
    A = np.float32(-0.75)
    one = np.float32(1)
    fx0 = fx + one
    fx1 = fx
    fx2 = one - fx
    w0 = A * fx0 * fx0 * fx0 - np.float32(5) * A * fx0 * fx0 + np.float32(8) * A * fx0 - np.float32(4) * A
    w1 = (A + 2) * fx1 * fx1 * fx1 - (A + 3) * fx1 * fx1 + one
    w2 = (A + 2) * fx2 * fx2 * fx2 - (A + 3) * fx2 * fx2 + one
    w3 = one - w0 - w1 - w2
    return np.stack([w0, w1, w2, w3], axis=1).astype(np.float32)


def cubic_coeffs(in_size: int, out_size: int, align_corner: bool, scale: float):
    """(offsets, weights[out, 4]): out = sum_k src[ofs - 1 + k] * w_k.

    Near the borders ncnn moves the window inside the image and shifts the weights
    with it (the four `if`s below run in sequence, as in ncnn, which matters for
    inputs narrower than 4 pixels)."""
    fx = _source_coords(in_size, out_size, align_corner, scale)
    sx = _c_floor_to_int(fx)
    with np.errstate(invalid="ignore"):
        fx = (fx - sx.astype(np.float32)).astype(np.float32)
        a = _cubic_weights(fx)
    zero = np.float32(0)

    m = sx <= -1
    a[m] = np.stack([np.float32(1) - a[m, 3], a[m, 3], np.zeros_like(a[m, 0]), np.zeros_like(a[m, 0])], 1)
    sx = np.where(m, 1, sx)
    m = sx == 0
    a[m] = np.stack([a[m, 0] + a[m, 1], a[m, 2], a[m, 3], np.zeros_like(a[m, 0])], 1)
    sx = np.where(m, 1, sx)
    m = sx == in_size - 2
    a[m] = np.stack([np.zeros_like(a[m, 0]), a[m, 0], a[m, 1], a[m, 2] + a[m, 3]], 1)
    sx = np.where(m, in_size - 3, sx)
    m = sx >= in_size - 1
    a[m] = np.stack([np.full_like(a[m, 0], zero), np.full_like(a[m, 0], zero), a[m, 0],
                     np.float32(1) - a[m, 0]], 1)
    sx = np.where(m, in_size - 3, sx)
    return sx, a.astype(np.float32)


def apply_taps(x: np.ndarray, axis: int, offsets: np.ndarray, weights: np.ndarray,
               first_tap: int) -> np.ndarray:
    """out[.., j, ..] = sum_k x[.., offsets[j] + first_tap + k, ..] * weights[j, k] along `axis`.

    Taps that ncnn reads outside the image always carry weight 0 (see the coeff tables);
    their index is clamped so we read a real pixel instead of ncnn's neighbouring memory.
    """
    n = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = len(offsets)
    acc = None
    for k in range(weights.shape[1]):
        idx = np.clip(offsets + first_tap + k, 0, n - 1)
        term = np.take(x, idx, axis=axis) * weights[:, k].reshape(shape)
        acc = term if acc is None else acc + term
    return acc.astype(np.float32, copy=False)


def resize_nearest(x: np.ndarray, out_h: int | None, out_w: int,
                   h_ratio: np.float32 | None, w_ratio: np.float32) -> np.ndarray:
    """Nearest on the last axis, and on the second-to-last too when out_h is given."""
    y = np.take(x, nearest_index(x.shape[-1], out_w, w_ratio), axis=-1)
    if out_h is not None:
        y = np.take(y, nearest_index(x.shape[-2], out_h, h_ratio), axis=-2)
    return y


def resize_linear(x: np.ndarray, out_h: int | None, out_w: int, align_corner: bool,
                  h_scale: float | None, w_scale: float, cubic: bool = False) -> np.ndarray:
    """Bilinear or bicubic on the last axis (and the second-to-last when out_h is given):
    horizontal pass first, then vertical, like ncnn's row-buffer implementation.

    Bilinear copies an axis whose size does not change, whatever the scale param says
    (ncnn's x86 bilinear takes that shortcut; bicubic does not)."""
    coeffs = cubic_coeffs if cubic else linear_coeffs
    first_tap = -1 if cubic else 0
    y = x
    if cubic or out_w != x.shape[-1]:
        ofs, wts = coeffs(x.shape[-1], out_w, align_corner, w_scale)
        y = apply_taps(y, x.ndim - 1, ofs, wts, first_tap)
    if out_h is not None and (cubic or out_h != x.shape[-2]):
        ofs, wts = coeffs(x.shape[-2], out_h, align_corner, h_scale)
        y = apply_taps(y, x.ndim - 2, ofs, wts, first_tap)
    return y
