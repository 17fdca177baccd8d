"""int8 quantization kernels: Quantize, Dequantize, Requantize.

Scales and biases are per row of a 2-D blob or per channel of a 3-D/4-D blob, or one
value for all. A 1-D blob uses only the first value (what ncnn 1.0.20261020 computes,
measured). float -> int8 rounds half away from zero and clamps to [-127, 127].
Integer inputs (ncnn's int32 accumulators) arrive here as float32 holding the integers.
"""

from __future__ import annotations

import numpy as np

from .activation import fused_activation
from .conv import float2int8

F32 = np.float32


def per_channel(values: np.ndarray, x: np.ndarray) -> np.ndarray | F32:
    """values broadcast over x: one scalar, or one per row/channel (axis 0 of a 2-D+ blob)."""
    values = np.asarray(values, F32).ravel()
    if values.size == 1 or x.ndim == 1:
        return F32(values[0])
    return values.reshape((-1,) + (1,) * (x.ndim - 1))


def quantize(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return float2int8(np.asarray(x, F32) * per_channel(scale, x))


def dequantize(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    out = np.asarray(x, F32) * per_channel(scale, x)
    if bias is not None:
        out = out + per_channel(bias, x)
    return out.astype(F32, copy=False)


def requantize(x: np.ndarray, scale_in: np.ndarray, scale_out: np.ndarray, bias: np.ndarray | None,
               activation_type: int, activation_params) -> np.ndarray:
    v = dequantize(x, scale_in, bias)
    v = fused_activation(v, activation_type, activation_params)
    return float2int8(v * per_channel(scale_out, x))
