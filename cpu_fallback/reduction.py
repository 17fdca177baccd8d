"""Reduction: sum / asum / sumsq / mean / max / min / prod / L1 / L2 / logsum / logsumexp
over chosen axes, as ncnn's Reduction layer computes them.

Axes are numpy axes of the blob ((c, d, h, w) order, negatives allowed). A 1-D blob is
always reduced whole, whatever the axes say. Quirks kept from ncnn:
- max/min start from -FLT_MAX/FLT_MAX, so an all -inf (+inf) slice gives -FLT_MAX (FLT_MAX);
- L2 flushes a sum of squares below FLT_MIN to 0 before the square root;
- logsumexp is log(sum(exp(x))) with no max subtraction (it overflows as ncnn does);
- mean divides by the reduced element count, then `coeff` scales every result.
"""

from __future__ import annotations

import numpy as np

from .activation import FLT_MAX, FLT_MIN

SUM, ASUM, SUMSQ, MEAN, MAX, MIN, PROD, L1, L2, LOGSUM, LOGSUMEXP = range(11)
OP_NAMES = ("sum", "asum", "sumsq", "mean", "max", "min", "prod", "l1", "l2", "logsum", "logsumexp")


def reduced_axes(ndim: int, reduce_all: bool, axes) -> tuple[int, ...]:
    """The numpy axes ncnn reduces for a blob of `ndim` dims (axes already range-checked)."""
    if reduce_all or ndim == 1:
        return tuple(range(ndim))
    return tuple(sorted({int(a) + ndim if a < 0 else int(a) for a in axes}))


def output_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    return kept if kept else (1,)


def reduction(x: np.ndarray, operation: int, axes: tuple[int, ...], keepdims: bool,
              coeff: float) -> np.ndarray:
    """Reduce x over the numpy `axes` with ncnn's operation code (0-10)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        if operation in (SUM, MEAN, LOGSUM):
            r = np.sum(x, axis=axes, dtype=np.float32)
        elif operation in (ASUM, L1):
            r = np.sum(np.abs(x), axis=axes, dtype=np.float32)
        elif operation in (SUMSQ, L2):
            r = np.sum(x * x, axis=axes, dtype=np.float32)
        elif operation == MAX:
            # ncnn's start value, also the max of nothing; float32 first: an int8 blob cannot hold it
            r = np.max(np.asarray(x, np.float32), axis=axes, initial=-FLT_MAX)
        elif operation == MIN:
            r = np.min(np.asarray(x, np.float32), axis=axes, initial=FLT_MAX)
        elif operation == PROD:
            r = np.prod(x, axis=axes, dtype=np.float32)
        elif operation == LOGSUMEXP:
            r = np.sum(np.exp(x), axis=axes, dtype=np.float32)
        else:
            raise ValueError(f"unknown reduction operation {operation}")

        r = np.asarray(r, dtype=np.float32)
        if operation in (LOGSUM, LOGSUMEXP):
            r = np.log(r)
        elif operation == L2:
            r = np.sqrt(np.where(r < FLT_MIN, np.float32(0), r))

        c = np.float32(coeff)
        if operation == MEAN:
            count = int(np.prod([x.shape[a] for a in axes]))
            c = np.float32(c / np.float32(count))
        if c != 1:
            r = r * c
    return np.asarray(r, dtype=np.float32).reshape(output_shape(x.shape, axes, keepdims))
