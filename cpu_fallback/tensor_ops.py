"""Small whole-tensor kernels: GLU, cumulative sum, flip, diagonal, top-k arg max.

Axes are numpy axes of the blob, which are ncnn's axes for dims 1-4 ((c, d, h, w)).
"""

from __future__ import annotations

import numpy as np

from .activation import sigmoid


def glu(x: np.ndarray, axis: int) -> np.ndarray:
    """First half of `axis` times sigmoid of the second half; an odd extent's last entry is in
    neither half (ncnn halves the extent rounding down and reads the gate right after the first)."""
    half = x.shape[axis] // 2
    a = np.take(x, np.arange(half), axis=axis)
    b = np.take(x, np.arange(half, 2 * half), axis=axis)
    return (a * sigmoid(b)).astype(np.float32, copy=False)


def cumulative_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """Running sum along `axis`, accumulated in order in float32 as ncnn does."""
    return np.cumsum(x, axis=axis, dtype=np.float32)


def flip(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.ascontiguousarray(np.flip(x, axis=axes)) if axes else x


def diag(x: np.ndarray, diagonal: int) -> np.ndarray:
    """1-D: a square matrix with x on the given diagonal; 2-D: that diagonal of x."""
    if x.ndim == 1:
        return np.diag(x, diagonal).astype(np.float32, copy=False)
    if not -x.shape[0] < diagonal < x.shape[1]:
        # outside the matrix: empty. Not numpy's to decide: np.diagonal negates the offset in
        # a C int, so -2**31 reads a diagonal past the buffer (a segfault, numpy 2.4)
        return np.zeros(0, np.float32)
    return np.ascontiguousarray(np.diagonal(x, diagonal))


def topk_argmax(x: np.ndarray, topk: int) -> tuple[np.ndarray, np.ndarray]:
    """The topk largest values of the flattened x, largest first, and their flat indices.

    Equal values come out larger index first: ncnn sorts (value, index) pairs descending.
    """
    flat = x.reshape(-1)
    order = np.lexsort((-np.arange(flat.size), -flat.astype(np.float64)))[:topk]
    return flat[order].astype(np.float32), order.astype(np.float32)
