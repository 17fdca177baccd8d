"""Elementwise activations as numpy kernels: ndarray -> new ndarray, float32."""

from __future__ import annotations

import numpy as np


def relu(x: np.ndarray, slope: float = 0.0) -> np.ndarray:
    if slope == 0.0:
        return np.maximum(x, np.float32(0))
    return np.where(x < 0, x * np.float32(slope), x).astype(np.float32, copy=False)
