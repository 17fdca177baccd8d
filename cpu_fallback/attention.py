"""Multi-head attention as numpy kernels (ncnn's MultiHeadAttention).

Sequences are rows: q (src_len, qdim), k (cur_len, kdim), v (cur_len, vdim).
The per-head tensors use ncnn's kv-cache layout (num_heads, seq_len, head_dim), so
the cached keys/values a layer returns can be fed straight back next step.
All heads are computed together with batched matrix products.
"""

from __future__ import annotations

import numpy as np

from vkncnn.errors import ShapeError


def project(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Rows of x (n, in) through a Linear weight (out, in): (n, out)."""
    return x @ weight.T + bias


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(seq, embed) -> (heads, seq, head_dim)."""
    seq, embed = x.shape
    return np.ascontiguousarray(x.reshape(seq, num_heads, embed // num_heads).transpose(1, 0, 2))


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(heads, seq, head_dim) -> (seq, heads*head_dim)."""
    heads, seq, dim = x.shape
    return x.transpose(1, 0, 2).reshape(seq, heads * dim)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    if x.size == 0:  # no query or no key: nothing to normalise (max has no identity)
        return x
    x = x - x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """softmax(q @ k^T + mask) @ v per head; q (H, S, d) already scaled, k/v (H, T, d).

    The mask broadcasts numpy-style against (H, S, T): (S, T), (H, S, T), a row
    (T,) / (1, T), a column (S, 1), as ncnn's x86 kernel accepts.
    """
    scores = np.matmul(q, k.transpose(0, 2, 1))
    if mask is not None:
        try:
            scores = scores + mask
        except ValueError as e:
            raise ShapeError(f"attention mask {mask.shape} does not broadcast against "
                             f"(heads, q_len, kv_len) = {scores.shape}") from e
        if scores.shape != (q.shape[0], q.shape[1], k.shape[1]):
            raise ShapeError(f"attention mask {mask.shape} would enlarge the scores {scores.shape}")
    return np.matmul(softmax_rows(scores), v)
