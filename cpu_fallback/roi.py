"""Region-of-interest pooling kernels (ROIPooling, ROIAlign, PSROIPooling) for one ROI.

ncnn's ROI layers pool a single box [x1, y1, x2, y2] (image coordinates, scaled by
spatial_scale). Arithmetic follows ncnn's float32 order where it decides which pixels
are read; sums are taken in float64.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def round_half_away(x) -> np.ndarray:
    """C's round(): halves go away from zero (numpy's round goes to even)."""
    x = np.asarray(x, np.float64)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


# -- ROIPooling: max over integer bins -------------------------------------------------------------
def _int_bins(start: int, bin_size: F32, n: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin p covers [start + floor(p * bin), start + ceil((p+1) * bin)), clipped to the map
    (ncnn's source). The pip wheel 1.0.20261020 measures differently at some edges; see
    tests/layers/test_roipooling.py."""
    p = np.arange(n, dtype=F32)
    lo = start + np.floor(p * bin_size).astype(np.int64)
    hi = start + np.ceil((p + F32(1)) * bin_size).astype(np.int64)
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def roi_max_pool(x: np.ndarray, roi: np.ndarray, pooled_w: int, pooled_h: int, spatial_scale: float) -> np.ndarray:
    """x (C, H, W) -> (C, pooled_h, pooled_w); empty bins give 0."""
    c, h, w = x.shape
    x1, y1, x2, y2 = (int(round_half_away(F32(v) * F32(spatial_scale))) for v in roi[:4])
    roi_w = max(x2 - x1 + 1, 1)
    roi_h = max(y2 - y1 + 1, 1)
    hs, he = _int_bins(y1, F32(roi_h) / F32(pooled_h), pooled_h, h)
    ws, we = _int_bins(x1, F32(roi_w) / F32(pooled_w), pooled_w, w)
    # max over each bin's columns, then over its rows: a slice per distinct bin, not a loop per
    # value; bins repeat once there are more of them than pixels (a pooled size of a million
    # over a 7-pixel map is 7 distinct bins, not a million slices)
    cols = _bin_max(x, ws, we, axis=2)        # (c, h, pooled_w)
    out = _bin_max(cols, hs, he, axis=1)      # (c, pooled_h, pooled_w)
    out[:, :, we <= ws] = 0
    return out


def _bin_max(x: np.ndarray, starts: np.ndarray, ends: np.ndarray, axis: int) -> np.ndarray:
    """Max of x over [starts[i], ends[i]) along `axis` for each bin i; 0 for an empty bin."""
    bins, which = np.unique(np.stack([starts, ends], axis=1), axis=0, return_inverse=True)
    shape = list(x.shape)
    shape[axis] = len(bins)
    maxima = np.zeros(shape, F32)
    for j, (a, b) in enumerate(bins.tolist()):
        if b > a:
            src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
            src[axis], dst[axis] = slice(a, b), j
            maxima[tuple(dst)] = x[tuple(src)].max(axis=axis)
    return maxima.take(which.reshape(-1), axis=axis)


# -- PSROIPooling: position-sensitive average over bins --------------------------------------------
def psroi_pool(x: np.ndarray, roi: np.ndarray, pooled_w: int, pooled_h: int, spatial_scale: float,
               output_dim: int) -> np.ndarray:
    """x (output_dim * pooled_h * pooled_w, H, W) -> (output_dim, pooled_h, pooled_w)."""
    _, h, w = x.shape
    s = F32(spatial_scale)
    x1 = F32(round_half_away(F32(roi[0]))) * s
    y1 = F32(round_half_away(F32(roi[1]))) * s
    x2 = F32(round_half_away(F32(roi[2]) + F32(1))) * s
    y2 = F32(round_half_away(F32(roi[3]) + F32(1))) * s
    bin_w = max(x2 - x1, F32(0.1)) / F32(pooled_w)
    bin_h = max(y2 - y1, F32(0.1)) / F32(pooled_h)
    ph = np.arange(pooled_h, dtype=F32)
    pw = np.arange(pooled_w, dtype=F32)
    hs = np.clip(np.floor(y1 + ph * bin_h).astype(np.int64), 0, h)
    he = np.clip(np.ceil(y1 + (ph + F32(1)) * bin_h).astype(np.int64), 0, h)
    ws = np.clip(np.floor(x1 + pw * bin_w).astype(np.int64), 0, w)
    we = np.clip(np.ceil(x1 + (pw + F32(1)) * bin_w).astype(np.int64), 0, w)
    # channel (q * pooled_h + ph) * pooled_w + pw feeds output (q, ph, pw)
    planes = x.reshape(output_dim, pooled_h, pooled_w, h, w)
    qi, hi, wi = np.ogrid[:output_dim, :pooled_h, :pooled_w]
    s_all = np.zeros((output_dim, pooled_h, pooled_w, h + 1, w + 1), np.float64)
    s_all[..., 1:, 1:] = planes.astype(np.float64).cumsum(-2).cumsum(-1)
    H0, H1, W0, W1 = hs[hi], he[hi], ws[wi], we[wi]
    sums = (s_all[qi, hi, wi, H1, W1] - s_all[qi, hi, wi, H0, W1]
            - s_all[qi, hi, wi, H1, W0] + s_all[qi, hi, wi, H0, W0])
    area = (H1 - H0) * (W1 - W0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(area > 0, sums / np.maximum(area, 1), 0).astype(F32)


# -- ROIAlign: bilinear samples averaged over bins ------------------------------------------------
def _axis_weights(samples: np.ndarray, valid: np.ndarray, size: int) -> np.ndarray:
    """(bins, size) matrix: for each bin, the summed bilinear weights its samples put on
    each pixel along one axis (ncnn's bilinear_interpolate, which is separable)."""
    pos = np.maximum(samples, F32(0))
    i0 = np.minimum(pos.astype(np.int64), size - 1)  # (int) truncation; clamp guards a sample at == size
    i1 = i0 + 1
    a0 = i1.astype(F32) - pos
    a1 = pos - i0.astype(F32)
    edge = i1 >= size
    i1 = np.where(edge, size - 1, i1)
    a0 = np.where(edge, F32(1), a0)
    a1 = np.where(edge, F32(0), a1)
    weights = np.zeros((samples.shape[0], size), np.float64)
    rows = np.broadcast_to(np.arange(samples.shape[0])[:, None], samples.shape)
    np.add.at(weights, (rows[valid], i0[valid]), a0[valid])
    np.add.at(weights, (rows[valid], i1[valid]), a1[valid])
    return weights


def roi_align(x: np.ndarray, roi: np.ndarray, pooled_w: int, pooled_h: int, spatial_scale: float,
              sampling_ratio: int, aligned: bool, version: int) -> np.ndarray:
    """x (C, H, W) -> (C, pooled_h, pooled_w). version 0: ncnn's original (bins clipped to
    the image, a sample grid per bin); version 1: detectron2's (one grid for all bins,
    samples beyond the border skipped)."""
    _, h, w = x.shape
    s = F32(spatial_scale)
    x1, y1, x2, y2 = (F32(v) * s for v in roi[:4])
    if aligned:
        x1, y1, x2, y2 = (v - F32(0.5) for v in (x1, y1, x2, y2))
    roi_w, roi_h = x2 - x1, y2 - y1
    if not aligned:
        roi_w, roi_h = max(roi_w, F32(1)), max(roi_h, F32(1))
    bin_w = roi_w / F32(pooled_w)
    bin_h = roi_h / F32(pooled_h)
    if version == 0:
        ry, cy = _v0_axis(y1, bin_h, pooled_h, h, sampling_ratio)
        rx, cx = _v0_axis(x1, bin_w, pooled_w, w, sampling_ratio)
        count = cy[:, None] * cx[None, :]
    else:
        ry, gy = _v1_axis(y1, bin_h, pooled_h, h, sampling_ratio, roi_h)
        rx, gx = _v1_axis(x1, bin_w, pooled_w, w, sampling_ratio, roi_w)
        count = np.full((pooled_h, pooled_w), max(gy * gx, 1), np.float64)
    sums = np.einsum("ph,chw,qw->cpq", ry, x.astype(np.float64), rx, optimize=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, sums / np.maximum(count, 1), 0).astype(F32)


def _v0_axis(start: F32, bin_size: F32, pooled: int, size: int, sampling_ratio: int):
    p = np.arange(pooled, dtype=F32)
    lo = np.clip(start + p * bin_size, F32(0), F32(size))
    hi = np.clip(start + (p + F32(1)) * bin_size, F32(0), F32(size))
    grid = np.full(pooled, sampling_ratio, np.int64) if sampling_ratio > 0 else np.ceil(hi - lo).astype(np.int64)
    grid = np.where(hi <= lo, 0, grid)  # an empty bin pools to 0
    g = max(int(grid.max(initial=0)), 1)
    b = np.arange(g, dtype=F32)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = lo[:, None] + (b + F32(0.5)) * bin_size / grid[:, None].astype(F32)
    valid = b < grid[:, None]
    samples = np.where(valid, samples, F32(0))
    return _axis_weights(samples, valid, size), grid.astype(np.float64)


def _v1_axis(start: F32, bin_size: F32, pooled: int, size: int, sampling_ratio: int, roi_size: F32):
    g = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_size / F32(pooled)))
    g = max(g, 0)
    p = np.arange(pooled, dtype=F32)[:, None]
    b = np.arange(g, dtype=F32)[None, :]
    samples = start + p * bin_size + (b + F32(0.5)) * bin_size / F32(max(g, 1))
    valid = (samples >= F32(-1)) & (samples <= F32(size))
    return _axis_weights(samples, valid, size), g
