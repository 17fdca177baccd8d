"""Checks shared by Quantize, Dequantize and Requantize: per-channel table sizes."""

import numpy as np

from vkncnn.errors import ParamError, ShapeError


def check_size(layer, key: int, name: str, size: int, allow_zero: bool = False) -> int:
    if size < (0 if allow_zero else 1) or size > (1 << 24):
        low = 0 if allow_zero else 1
        raise ParamError(f"{layer.type} {layer.name!r}: {name} (param {key}) must be {low}..{1 << 24}, got {size}")
    return size


def check_table(layer, name: str, table: np.ndarray, x: np.ndarray) -> None:
    """A table of n > 1 values needs n rows (2-D) or channels (3-D/4-D) to scale."""
    n = int(np.asarray(table).size)
    if n > 1 and x.ndim >= 2 and x.shape[0] != n:
        axis = "rows" if x.ndim == 2 else "channels"
        raise ShapeError(f"{layer.type} {layer.name!r}: {name} has {n} values but the blob {x.shape} has "
                         f"{x.shape[0]} {axis}")
