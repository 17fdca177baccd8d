"""MultiHeadAttention with int8_scale_term, as ncnn computes it: every one of its six
matrix products is an int8 Gemm (cpu_fallback/gemm_int8.py). The projections use the
int8 weights with their per-row scales against the input quantized as a whole; the
per-head products quantize their left operand per row and the right one as a whole;
the output projection has one scale for its whole weight. Softmax stays float32.

Layouts are the float path's (cpu_fallback/attention.py): rows (seq, dim) in and out,
per-head tensors (heads, seq, head_dim).
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback.attention import softmax_rows
from vkncnn.cpu_fallback.gemm_int8 import gemm_int8, quantize_rows, quantize_whole
from vkncnn.errors import ShapeError


def project_int8(x: np.ndarray, weight_q: np.ndarray, weight_scales: np.ndarray, bias: np.ndarray,
                 alpha: float = 1.0) -> np.ndarray:
    """Rows x (seq, in) through an int8 Linear (out, in): ((W x^T) descaled + bias) * alpha,
    as (seq, out). ncnn's Gemm here has the weight as A and x^T as B."""
    xq, sx = quantize_whole(np.asarray(x, np.float32))
    out = gemm_int8(weight_q, weight_scales, xq.T, sx, np.asarray(bias, np.float32)[:, None], alpha)
    return np.ascontiguousarray(out.T)


def attention_int8(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """softmax(q k^T + mask) v per head, both products int8; q (H, S, d) already scaled,
    k/v (H, T, d); the mask (S, T) for every head or (H, S, T)."""
    heads, src, _ = q.shape
    dst = k.shape[1]
    out = np.empty((heads, src, v.shape[2]), np.float32)
    for h in range(heads):
        c = None
        if mask is not None:
            c = mask[h] if mask.ndim == 3 else mask
            if c.shape not in ((src, dst), (1, dst), (src, 1), (dst,)):
                raise ShapeError(f"attention mask {mask.shape} does not fit the scores ({src}, {dst})")
        aq, sa = quantize_rows(q[h])
        kq, sk = quantize_whole(k[h])
        scores = gemm_int8(aq, sa, kq.T, sk, c)
        pq, sp = quantize_rows(softmax_rows(scores))
        vq, sv = quantize_whole(v[h])
        out[h] = gemm_int8(pq, sp, vq, sv)
    return out


def out_project_int8(merged: np.ndarray, weight_q: np.ndarray, weight_scale, bias: np.ndarray) -> np.ndarray:
    """Merged heads (seq, embed) through the int8 output Linear (qdim, embed) with one scale."""
    aq, sa = quantize_rows(np.asarray(merged, np.float32))
    return gemm_int8(aq, sa, weight_q.T, weight_scale, np.asarray(bias, np.float32)[None, :])
