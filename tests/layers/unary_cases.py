"""Inputs shared by the one-input elementwise tests (Erf, CELU, Shrink, BNLL)."""

import numpy as np

from tests.oracle import rand

# every rank 1-4, odd sizes, channel counts 1/3/4/8/12/16 along the GPU packing axis
SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5), (1, 5, 5)]


def unary_input(shape, seed=0, lo=-6.0, hi=6.0, edges=True) -> np.ndarray:
    x = rand(*shape, seed=seed, lo=lo, hi=hi)
    if edges and x.size >= 6:
        x.ravel()[:6] = [0.0, -0.0, -30.0, 30.0, 1e-3, -1e-3]
    return x
