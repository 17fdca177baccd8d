"""Normalisation kernels: per-channel affine (BatchNorm, Scale, Bias), Softmax,
LayerNorm, InstanceNorm, GroupNorm, LRN and Normalize.

"Channel" follows ncnn's packing axis, which in numpy terms is always axis 0:
w for a 1-D blob, h (rows) for 2-D, c for 3-D and 4-D. Statistics are computed in
float32 with the mean subtracted before squaring (two passes), as ncnn does.
"""

from __future__ import annotations

import numpy as np

from .activation import exp_ps


def per_channel(v: np.ndarray, ndim: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast against a blob of `ndim` dims (axis 0)."""
    return np.asarray(v, np.float32).reshape((-1,) + (1,) * (ndim - 1))


def channel_affine(x: np.ndarray, scale: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    """y = x * scale[c] + bias[c] along the channel axis (either term may be absent)."""
    y = x
    if scale is not None:
        y = y * per_channel(scale, x.ndim)
    if bias is not None:
        y = y + per_channel(bias, x.ndim)
    return np.asarray(y, dtype=np.float32)


def fold_batchnorm(slope, mean, var, bias, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm's (b, a) with y = b * x + a, computed once at load as ncnn does."""
    sqrt_var = np.sqrt(np.asarray(var, np.float32) + np.float32(eps))
    b = np.asarray(slope, np.float32) / sqrt_var
    a = np.asarray(bias, np.float32) - np.asarray(slope, np.float32) * np.asarray(mean, np.float32) / sqrt_var
    return b.astype(np.float32), a.astype(np.float32)


# -- Softmax -------------------------------------------------------------------------

def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x - max) / sum along one numpy axis."""
    if x.size == 0:  # nothing to normalise (np.max has no identity to start from)
        return x.astype(np.float32, copy=True)
    m = np.max(x, axis=axis, keepdims=True)
    e = exp_ps(x - m)
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.float32, copy=False)


# -- mean/variance normalisation -------------------------------------------------------

def _normalize_groups(g: np.ndarray, eps: float) -> np.ndarray:
    """Normalise each row of a 2-D (groups, elements) view: (x - mean) / sqrt(var + eps)."""
    mean = np.mean(g, axis=1, keepdims=True, dtype=np.float32)
    centered = g - mean
    var = np.mean(centered * centered, axis=1, keepdims=True, dtype=np.float32)
    a = np.float32(1) / np.sqrt(var + np.float32(eps))
    return (g * a - mean * a).astype(np.float32, copy=False)


def normalize_last(x: np.ndarray, inner: int, eps: float) -> np.ndarray:
    """Normalise every contiguous run of `inner` elements (the innermost axes) of x."""
    if x.size == 0:  # no run to normalise (a reshape to (-1, 0) is ambiguous)
        return x.astype(np.float32, copy=True)
    return _normalize_groups(x.reshape(-1, inner), eps).reshape(x.shape)


def layernorm(x: np.ndarray, inner: int, eps: float, gamma=None, beta=None) -> np.ndarray:
    """LayerNorm over runs of `inner` innermost elements, then gamma/beta of that length."""
    if x.size == 0:
        return x.astype(np.float32, copy=True)
    y = normalize_last(x, inner, eps)
    if gamma is not None:
        flat = y.reshape(-1, inner) * np.asarray(gamma, np.float32).reshape(1, inner)
        flat = flat + np.asarray(beta, np.float32).reshape(1, inner)
        y = flat.reshape(x.shape)
    return y.astype(np.float32, copy=False)


def groupnorm(x: np.ndarray, group: int, eps: float, gamma=None, beta=None) -> np.ndarray:
    """GroupNorm: channels (numpy axis 0) split into `group` groups, each normalised as one."""
    y = _normalize_groups(x.reshape(group, -1), eps).reshape(x.shape)
    if gamma is not None:
        y = channel_affine(y, gamma, beta)
    return y


def instancenorm(x: np.ndarray, eps: float, gamma=None, beta=None) -> np.ndarray:
    """InstanceNorm: each channel normalised over its own spatial extent."""
    y = _normalize_groups(x.reshape(x.shape[0], -1), eps).reshape(x.shape)
    if gamma is not None:
        y = channel_affine(y, gamma, beta)
    return y


# -- LRN -------------------------------------------------------------------------------
LRN_ACROSS_CHANNELS, LRN_WITHIN_CHANNEL = 0, 1


def _window_sum(sq: np.ndarray, axis: int, size: int) -> np.ndarray:
    """Sum over a window of `size` along `axis`, zero padded size//2 before, the rest after.

    Small windows (LRN's usual 3-5) add `size` shifted slices in float32, in place; large
    ones difference a float64 running sum, which stays exact-ish however long the window.
    """
    n = sq.shape[axis]
    before = size // 2
    if size <= 16:
        out = sq.copy()  # the window's own element (d = 0)
        for k in range(size):
            d = k - before  # out[i] += sq[i + d] where 0 <= i + d < n
            lo, hi = max(0, -d), min(n, n - d)
            if d != 0 and hi > lo:
                dst = _axis_slice(out, axis, lo, hi)
                np.add(dst, _axis_slice(sq, axis, lo + d, hi + d), out=dst)
        return out
    csum = np.zeros(sq.shape[:axis] + (n + size,) + sq.shape[axis + 1:], np.float64)
    np.cumsum(sq, axis=axis, dtype=np.float64, out=_axis_slice(csum, axis, before + 1, before + 1 + n))
    # csum[j] = sum of sq[:j - before]; extend the last value over the trailing pad
    tail = _axis_slice(csum, axis, before + n, before + n + 1)
    _axis_slice(csum, axis, before + 1 + n, n + size)[...] = tail
    hi = _axis_slice(csum, axis, size, size + n)
    lo = _axis_slice(csum, axis, 0, n)
    return (hi - lo).astype(np.float32)


def _axis_slice(a: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    index = [slice(None)] * a.ndim
    index[axis] = slice(lo, hi)
    return a[tuple(index)]


def lrn(x: np.ndarray, region_type: int, local_size: int, alpha: float, beta: float,
        bias: float) -> np.ndarray:
    """Local response normalisation: x * (bias + alpha/n * sum(x^2 over the window))^-beta.

    The window starts local_size//2 before the element and spans local_size (zero
    padded, so an even size reaches one further back than forward). Across channels it
    runs over channels at each position, n = local_size; within a channel it is a
    local_size x local_size square of the (h, w) plane, n = local_size^2.
    A 1-D or 2-D blob is one channel of shape (1, w) or (h, w).
    """
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape).astype(np.float32, copy=False)
    sq = np.square(x3)
    if region_type == LRN_ACROSS_CHANNELS:
        base = _window_sum(sq, 0, local_size)
        n = local_size
    else:
        base = _window_sum(_window_sum(sq, 1, local_size), 2, local_size)
        n = local_size * local_size
    np.multiply(base, np.float32(alpha / n), out=base)
    np.add(base, np.float32(bias), out=base)
    out = _negative_power(base, beta)
    np.multiply(out, x3, out=out)
    return out.reshape(x.shape)


def _negative_power(base: np.ndarray, beta: float) -> np.ndarray:
    """base ** -beta, overwriting base. numpy's float32 power is a scalar powf loop
    (slow); for a positive base exp(-beta * log(base)) agrees to a few ulp and is
    vectorised (ncnn's SIMD kernels compute pow the same way)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if base.size == 0 or not base.min() > 0:
            return np.power(base, np.float32(-beta))
        np.log(base, out=base)
        np.multiply(base, np.float32(-beta), out=base)
        return np.exp(base, out=base)


# -- Normalize (L2 normalisation, SSD style) ----------------------------------------------

def _inv_norm(ssum: np.ndarray, eps: float, eps_mode: int) -> np.ndarray:
    """1 / ||x|| with eps placed as caffe (0), pytorch (1) or tensorflow (2) place it."""
    e = np.float32(eps)
    if eps_mode == 0:
        return np.float32(1) / np.sqrt(ssum + e)
    if eps_mode == 1:
        return np.float32(1) / np.maximum(np.sqrt(ssum), e)
    return np.float32(1) / np.sqrt(np.maximum(ssum, e))


def normalize(x: np.ndarray, across_spatial: bool, across_channel: bool, channel_shared: bool,
              eps: float, eps_mode: int, scale: np.ndarray) -> np.ndarray:
    """Normalize: divide by the L2 norm over channels, space or both, then scale.

    The blob is seen as (channels, spatial): 1-D and 2-D blobs are one channel.
    """
    if x.size == 0:  # nothing to divide (a reshape of no channels to (0, -1) is ambiguous)
        return x.astype(np.float32, copy=True)
    c = x.shape[0] if x.ndim >= 3 else 1
    v = x.reshape(c, -1)
    s = np.asarray(scale, np.float32)
    s = s[:1].reshape(1, 1) if channel_shared else s[:c].reshape(c, 1)
    with np.errstate(divide="ignore"):
        if across_spatial and across_channel:
            a = _inv_norm(np.sum(v * v, dtype=np.float32), eps, eps_mode)
            y = v * (a * s)
        elif across_spatial:
            a = _inv_norm(np.sum(v * v, axis=1, keepdims=True, dtype=np.float32), eps, eps_mode)
            y = v * (a * s)
        elif across_channel:
            a = _inv_norm(np.sum(v * v, axis=0, keepdims=True, dtype=np.float32), eps, eps_mode)
            y = v * a * s
        else:
            y = v.copy()  # neither region: ncnn leaves the blob as it is
    return np.asarray(y, dtype=np.float32).reshape(x.shape)
