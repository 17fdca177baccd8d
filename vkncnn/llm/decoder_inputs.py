"""The non-token inputs of an LLM decoder step: the attention mask and the RoPE tables.

They depend only on how many tokens are cached (past) and how many are new, so each step
builds them afresh; both are small (new x (past + new), and new x head_dim / 2).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..array_checks import is_int
from ..errors import ArgumentError
from ..memory_budget import check_alloc

# additive mask value: exp() of it is 0 in fp32, and it stays finite (fp16 storage makes it -inf)
MASKED = np.float32(-1e30)


def causal_mask(new: int, past: int) -> np.ndarray:
    """(new, past + new) float32: 0 where a new token may attend (the past and itself), MASKED after it."""
    new, past = _count(new, "causal_mask(): new"), _count(past, "causal_mask(): past")
    check_alloc(None, (new, past + new), 4, "causal_mask()")
    mask = np.zeros((new, past + new), np.float32)
    mask[:, past:] = np.triu(np.full((new, new), MASKED, np.float32), 1)
    return mask


def rope_tables(past: int, new: int, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of (position x inverse frequency) for positions past..past+new-1: (new, head_dim / 2) each."""
    past, new = _count(past, "rope_tables(): past"), _count(new, "rope_tables(): new")
    if not is_int(head_dim) or head_dim <= 0 or head_dim % 2:
        raise ArgumentError(f"rope_tables(): head_dim: expected a positive even int, got {head_dim!r:.40}")
    check_rope_base(base, "rope_tables(): base")
    check_alloc(None, (new, head_dim // 2), 8, "rope_tables()")  # the angles, float64
    inv_freq = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(past, past + new, dtype=np.float64), inv_freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def check_rope_base(base: object, what: str) -> float:
    """base as a float, if it is a finite real number above 1 (RoPE's 10000.0 and the like)."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real) or not 1 < base < math.inf:
        raise ArgumentError(f"{what}: expected a finite number > 1 (such as 10000.0), got {base!r:.40}")
    return float(base)


def _count(value, what: str) -> int:
    if not is_int(value) or value < 0:
        raise ArgumentError(f"{what}: expected an int >= 0 (tokens), got {value!r:.40}")
    return int(value)
