"""Kernels of the LLM decoder layers: RMSNorm, RotaryEmbed, SDPA (numpy, float32)."""

from __future__ import annotations

import numpy as np


def rms_group_axes(shape: tuple, affine_size: int) -> tuple:
    """The innermost numpy axes normalised together, as ncnn's x86 RMSNorm picks them:
    rows (w) when affine_size == w (always for 1-D/2-D), (h, w) planes of a 4-D blob when
    affine_size == w * h, else whole channels."""
    ndim = len(shape)
    if ndim <= 2 or affine_size == shape[-1]:
        return (ndim - 1,)
    if ndim == 4 and affine_size == shape[-1] * shape[-2]:
        return (2, 3)
    return tuple(range(1, ndim))


def rms_norm(x: np.ndarray, gamma: np.ndarray | None, eps: float, affine_size: int) -> np.ndarray:
    """x / sqrt(mean(x^2) + eps) * gamma over the groups rms_group_axes picks."""
    if x.size == 0:  # no group to normalise (a reshape to (-1, 0) is ambiguous)
        return x.astype(np.float32, copy=True)
    axes = rms_group_axes(x.shape, affine_size)
    inner = int(np.prod([x.shape[a] for a in axes]))
    flat = x.reshape(-1, inner)
    ms = np.mean(np.square(flat, dtype=np.float32), axis=-1, keepdims=True, dtype=np.float32)
    y = flat * (np.float32(1) / np.sqrt(ms + np.float32(eps)))
    if gamma is not None:
        y = y * gamma.reshape(-1)
    return y.reshape(x.shape).astype(np.float32, copy=False)


def rotary_embed(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotate pairs of x (heads, seqlen, dim) by per-position angles given as cos/sin (seqlen, dim/2)."""
    dim = x.shape[-1]
    half = dim // 2
    if interleaved:
        x0, x1 = x[..., 0:2 * half:2], x[..., 1:2 * half:2]
        c, s = cos[..., :half], sin[..., :half]
        out = np.empty_like(x)
        out[..., 0:2 * half:2] = x0 * c - x1 * s
        out[..., 1:2 * half:2] = x0 * s + x1 * c
        return out
    x0, x1 = x[..., :half], x[..., half:2 * half]
    c0, s0 = cos[..., :half], sin[..., :half]
    # a full-width cache carries separate angles for the second half (2-D / vision rope)
    c1, s1 = (cos[..., half:2 * half], sin[..., half:2 * half]) if cos.shape[-1] == dim else (c0, s0)
    out = np.empty_like(x)
    out[..., :half] = x0 * c0 - x1 * s0
    out[..., half:2 * half] = x0 * s1 + x1 * c1
    return out


def sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """softmax(q k^T * scale + mask) v, per head; k/v heads are shared by groups of q heads (GQA)."""
    heads, groups = q.shape[0], k.shape[0]
    per_group = heads // groups
    k = np.repeat(k, per_group, axis=0)
    v = np.repeat(v, per_group, axis=0)
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * np.float32(scale)
    if mask is not None:
        s = s + (mask if mask.ndim == 3 else mask[None])
    s = s - np.max(s, axis=-1, keepdims=True)
    p = np.exp(s)
    p /= np.sum(p, axis=-1, keepdims=True)
    return np.matmul(p, v).astype(np.float32, copy=False)
