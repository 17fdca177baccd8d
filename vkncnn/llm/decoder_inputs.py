"""The non-token inputs of an LLM decoder step: the attention mask and the RoPE tables.

They depend only on how many tokens are cached (past) and how many are new, so each step
builds them afresh; both are small (new x (past + new), and new x head_dim / 2).
"""

from __future__ import annotations

import numpy as np

# additive mask value: exp() of it is 0 in fp32, and it stays finite (fp16 storage makes it -inf)
MASKED = np.float32(-1e30)


def causal_mask(new: int, past: int) -> np.ndarray:
    """(new, past + new) float32: 0 where a new token may attend (the past and itself), MASKED after it."""
    mask = np.zeros((new, past + new), np.float32)
    mask[:, past:] = np.triu(np.full((new, new), MASKED, np.float32), 1)
    return mask


def rope_tables(past: int, new: int, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of (position x inverse frequency) for positions past..past+new-1: (new, head_dim / 2) each."""
    inv_freq = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(past, past + new, dtype=np.float64), inv_freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
