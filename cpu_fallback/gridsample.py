"""GridSample kernels: sample an image at normalised grid coordinates.

Coordinates follow ncnn (and PyTorch): -1 / 1 are the outer pixel edges, or the
outer pixel centres with align_corner. Padding modes: 1 zeros (outside reads 0),
2 border (clamp), 3 reflection (mirror once about the edges, then clamp).
All arithmetic stays float32 in ncnn's operation order.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
ZEROS, BORDER, REFLECTION = 1, 2, 3
BILINEAR, NEAREST, BICUBIC = 1, 2, 3


def unnormalize(g: np.ndarray, size: int, align_corner: bool) -> np.ndarray:
    g = np.asarray(g, F32)
    if align_corner:
        return (g + F32(1)) / F32(2) * F32(size - 1)
    return ((g + F32(1)) * F32(size) - F32(1)) / F32(2)


def _reflect(x: np.ndarray, high: float) -> np.ndarray:
    high = F32(high)
    return high - np.abs(np.abs(x) - high)


def apply_padding(x: np.ndarray, size: int, padding_mode: int, align_corner: bool) -> np.ndarray:
    """ncnn's compute_coord: where an unnormalised coordinate reads from."""
    if padding_mode == BORDER:
        return np.clip(x, F32(0), F32(size - 1))
    if padding_mode == REFLECTION:
        if align_corner:
            # one mirror, then a clamp: a coordinate beyond one reflection (a bicubic tap 2
            # past the edge, a grid value beyond +-3) reads the edge, as in ncnn
            return np.clip(_reflect(x, size - 1), F32(0), F32(size - 1))
        return np.clip(_reflect(x + F32(0.5), size) - F32(0.5), F32(0), F32(size - 1))
    return x


def _gather(planes: np.ndarray, idx: list[np.ndarray], sizes: tuple[int, ...]) -> np.ndarray:
    """planes (C, *sizes) read at integer indices (z, y, x order); 0 outside."""
    inside = np.ones(idx[0].shape, bool)
    flat = np.zeros(idx[0].shape, np.int64)
    for i, n in zip(idx, sizes):
        inside &= (i >= 0) & (i < n)
        flat = flat * n + np.clip(i, 0, n - 1)
    values = planes.reshape(planes.shape[0], -1)[:, flat]
    return np.where(inside, values, F32(0))


def _floor_int(x: np.ndarray) -> np.ndarray:
    # coordinates far outside (or nan) only ever read padding: keep the int cast defined
    return np.floor(np.nan_to_num(x, nan=-2.0, posinf=2**30, neginf=-2**30).clip(-2**30, 2**30)).astype(np.int64)


def sample_2d(image: np.ndarray, gx: np.ndarray, gy: np.ndarray, sample_type: int, padding_mode: int,
              align_corner: bool) -> np.ndarray:
    """image (C, H, W); gx, gy (outh, outw) normalised -> (C, outh, outw)."""
    _, h, w = image.shape
    sx = unnormalize(gx, w, align_corner)
    sy = unnormalize(gy, h, align_corner)
    if sample_type == BICUBIC:
        return _bicubic_2d(image, sx, sy, padding_mode, align_corner)
    sx = apply_padding(sx, w, padding_mode, align_corner)
    sy = apply_padding(sy, h, padding_mode, align_corner)
    if sample_type == NEAREST:
        return _gather(image, [_floor_int(sy + F32(0.5)), _floor_int(sx + F32(0.5))], (h, w))
    x0, y0 = _floor_int(sx), _floor_int(sy)
    alpha = sx - x0.astype(F32)
    beta = sy - y0.astype(F32)
    v00 = _gather(image, [y0, x0], (h, w))
    v01 = _gather(image, [y0, x0 + 1], (h, w))
    v10 = _gather(image, [y0 + 1, x0], (h, w))
    v11 = _gather(image, [y0 + 1, x0 + 1], (h, w))
    v0 = v00 * (F32(1) - alpha) + v01 * alpha
    v1 = v10 * (F32(1) - alpha) + v11 * alpha
    return v0 * (F32(1) - beta) + v1 * beta


def cubic_coeffs(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic convolution weights (A = -0.75) for the taps at -1, 0, 1, 2."""
    a = F32(-0.75)
    t0, t1, t2 = t + F32(1), t, F32(1) - t
    c0 = a * t0 * t0 * t0 - F32(5) * a * t0 * t0 + F32(8) * a * t0 - F32(4) * a
    c1 = (a + F32(2)) * t1 * t1 * t1 - (a + F32(3)) * t1 * t1 + F32(1)
    c2 = (a + F32(2)) * t2 * t2 * t2 - (a + F32(3)) * t2 * t2 + F32(1)
    return [c0, c1, c2, F32(1) - c0 - c1 - c2]


def _bicubic_tap(i: np.ndarray, size: int, padding_mode: int, align_corner: bool) -> np.ndarray:
    # ncnn pads each integer tap, then truncates the padded float back to int
    padded = apply_padding(i.astype(F32), size, padding_mode, align_corner)
    return np.trunc(np.nan_to_num(padded).clip(-2**30, 2**30)).astype(np.int64)


def _bicubic_2d(image, sx, sy, padding_mode, align_corner):
    _, h, w = image.shape
    x1, y1 = _floor_int(sx), _floor_int(sy)
    cx = cubic_coeffs(sx - x1.astype(F32))
    cy = cubic_coeffs(sy - y1.astype(F32))
    xs = [_bicubic_tap(x1 + k, w, padding_mode, align_corner) for k in (-1, 0, 1, 2)]
    ys = [_bicubic_tap(y1 + k, h, padding_mode, align_corner) for k in (-1, 0, 1, 2)]
    out = None
    for j in range(4):  # 4 x 4 taps
        row = None
        for i in range(4):
            term = _gather(image, [ys[j], xs[i]], (h, w)) * cx[i]
            row = term if row is None else row + term
        term = row * cy[j]
        out = term if out is None else out + term
    return out


def sample_3d(volume: np.ndarray, gx, gy, gz, sample_type: int, padding_mode: int,
              align_corner: bool) -> np.ndarray:
    """volume (C, D, H, W); gx, gy, gz (outd, outh, outw) -> (C, outd, outh, outw)."""
    _, d, h, w = volume.shape
    sx = apply_padding(unnormalize(gx, w, align_corner), w, padding_mode, align_corner)
    sy = apply_padding(unnormalize(gy, h, align_corner), h, padding_mode, align_corner)
    sz = apply_padding(unnormalize(gz, d, align_corner), d, padding_mode, align_corner)
    sizes = (d, h, w)
    if sample_type == NEAREST:
        return _gather(volume, [_floor_int(sz + F32(0.5)), _floor_int(sy + F32(0.5)),
                                _floor_int(sx + F32(0.5))], sizes)
    x0, y0, z0 = _floor_int(sx), _floor_int(sy), _floor_int(sz)
    a = sx - x0.astype(F32)
    b = sy - y0.astype(F32)
    g = sz - z0.astype(F32)

    def lerp_x(z, y):
        return _gather(volume, [z, y, x0], sizes) * (F32(1) - a) + _gather(volume, [z, y, x0 + 1], sizes) * a

    v0 = lerp_x(z0, y0) * (F32(1) - b) + lerp_x(z0, y0 + 1) * b
    v1 = lerp_x(z0 + 1, y0) * (F32(1) - b) + lerp_x(z0 + 1, y0 + 1) * b
    return v0 * (F32(1) - g) + v1 * g
