"""int8 matrix products as ncnn's Gemm (int8_scale_term) computes them.

Each operand is int8 with a scale (q = float2int8(x * scale)): a constant stored int8
in the .bin comes with its scales (A: one per row, B: one for the whole matrix); any
other operand is quantized on the fly with absmax scales: A per row, B as a whole
(127 / absmax, 1 where the absmax is 0). The int32 sums are then scaled back:
y = (sum / (scale_A[row] * scale_B) + beta * C) * alpha, in float32 as ncnn does.
MultiHeadAttention's int8 path is six such products.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback.conv import float2int8

F32 = np.float32


def absmax_scale(x: np.ndarray, axis=None) -> np.ndarray:
    """127 / max|x| (over `axis`, or all of x), 1 where that max is 0."""
    m = np.abs(np.asarray(x, F32)).max(axis=axis, initial=F32(0))  # 0 for nothing: scale 1
    with np.errstate(divide="ignore"):
        return np.where(m == 0, F32(1), F32(127) / m).astype(F32)


def quantize_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 a, scale per row): A's dynamic quantization."""
    s = absmax_scale(a, axis=1)
    return float2int8(a * s[:, None]), s


def quantize_whole(b: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """(int8 b, one scale): B's dynamic quantization."""
    s = F32(absmax_scale(b))
    return float2int8(b * s), s


def gemm_int8(aq: np.ndarray, a_scales: np.ndarray, bq: np.ndarray, b_scale, c: np.ndarray | None = None,
              alpha: float = 1.0, beta: float = 1.0) -> np.ndarray:
    """(M, K) int8 @ (K, N) int8 -> float32 (M, N); c already broadcast to (M, N) or None."""
    acc = aq.astype(np.float64) @ bq.astype(np.float64)  # every int32 sum is exact in float64
    descale = (F32(1) / (np.asarray(a_scales, F32) * F32(b_scale))).astype(F32)
    out = acc.astype(F32) * descale[:, None]
    if c is not None:
        out = out + np.asarray(c, F32) * F32(beta)
    return (out * F32(alpha)).astype(F32, copy=False)


def gemm_dynamic(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, alpha: float = 1.0,
                 beta: float = 1.0) -> np.ndarray:
    """Both operands float: A quantized per row, B as a whole."""
    aq, sa = quantize_rows(a)
    bq, sb = quantize_whole(b)
    return gemm_int8(aq, sa, bq, sb, c, alpha, beta)
