"""Einsum as ncnn defines it: letters i..x name axes, the output is i[j[k[l]]].

ncnn's output axes are positional: whatever letters the right-hand side spells, a
rank-n output has axes i, j, k, l in that order, and every other letter is summed.
The layer validates equations so that only the ones meaning that reach here.
"""

from __future__ import annotations

import numpy as np

OUTPUT_LETTERS = "ijkl"


def einsum(tokens: list[str], operands: list[np.ndarray], out_rank: int) -> np.ndarray:
    """Sum of products over every letter not among the first `out_rank` of 'ijkl'."""
    ops = [np.asarray(a, np.float64) for a in operands]  # summed in float64, rounded once
    result = np.einsum(",".join(tokens) + "->" + OUTPUT_LETTERS[:out_rank], *ops, optimize=True)
    return np.ascontiguousarray(result, dtype=np.float32)


def trace(m: np.ndarray) -> np.ndarray:
    return np.array([np.trace(np.asarray(m, np.float64))], np.float32)
