"""How `Mat(ndarray)` takes an array: which arrays it shares, which it copies, and how.

pyncnn wraps the array's buffer as it is: a Mat and the array then see the same memory
(writes go through both ways, an int32 array reads back with `numpy(format='i')`), but
it also reads strided arrays and 8-byte dtypes byte-wise, which gives silently wrong
values. The rules here keep the sharing and drop the wrong reads:

- a C-contiguous, aligned, writable, native-order array of 1-, 2- or 4-byte numbers
  (float32, float16, int8/uint8, int16/uint16, int32/uint32) is shared: elemsize is its
  itemsize, and the Mat holds a reference, so the buffer lives as long as the Mat;
- anything else is copied: strided or read-only arrays keep their dtype in a contiguous
  copy; bool, float64, int64 and the other 8-byte numbers become float32 values (the
  values, not the bytes).

The net itself never writes into either: `Extractor.input` takes a float32 copy of the
values (vkncnn/extractor.py).
"""

from __future__ import annotations

import numpy as np

from .array_checks import as_array, check_buffer
from .errors import MatAllocationError, MatError, MatShapeError

SHAREABLE_ITEMSIZES = (1, 2, 4)


def _shareable(a: np.ndarray) -> bool:
    return (a.dtype.kind in "iuf" and a.dtype.itemsize in SHAREABLE_ITEMSIZES
            and a.dtype.isnative and a.flags.c_contiguous and a.flags.aligned and a.flags.writeable)


def _checked_float32(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" and a.dtype.itemsize > 4:
        finite = np.isfinite(a)
        if np.any(np.abs(a[finite]) > np.finfo(np.float32).max):
            raise MatError("array has values beyond float32's range; cannot convert without loss")
    return np.array(a, dtype=np.float32, order="C", copy=True)


def _bounded_copy(a: np.ndarray, itemsize: int, what: str, make) -> np.ndarray:
    """make(a), a copy of `itemsize`-byte values, within the memory budget (a broadcast view
    can be tiny and its copy huge) and with running out of memory a MatAllocationError."""
    check_buffer(a.shape, itemsize, f"{what} of shape {a.shape}")
    try:
        return make(a)
    except MemoryError:
        raise MatAllocationError(f"{what}: not enough memory for a copy of shape {a.shape}") from None


def _copy(a: np.ndarray, what: str) -> np.ndarray:
    """A C-contiguous copy: same dtype for the shareable kinds, float32 values otherwise."""
    if a.dtype.kind in "iuf" and a.dtype.itemsize in SHAREABLE_ITEMSIZES:
        return _bounded_copy(a, a.dtype.itemsize, what,
                             lambda v: np.array(v, dtype=v.dtype.newbyteorder("="), order="C", copy=True))
    return _bounded_copy(a, 4, what, _checked_float32)


def _real(a: np.ndarray, what: str) -> np.ndarray:
    if a.dtype.kind not in "biuf":
        raise MatError(f"{what} needs a real-valued array (bool, int, uint or float), got dtype {a.dtype}")
    return a


def float32_copy(array: object, what: str) -> np.ndarray:
    """A C-contiguous float32 copy of a real-valued array (a MatError for anything else)."""
    return _bounded_copy(_real(as_array(array, what), what), 4, what, _checked_float32)


def intake(array: object, what: str = "Mat(array)") -> tuple[np.ndarray, bool]:
    """(storage, shared): the array itself when it can be shared, else a contiguous copy."""
    a = _real(as_array(array, what), what)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim > 4:
        raise MatShapeError(f"{what}: a Mat holds 1-4 dims (w / h,w / c,h,w / c,d,h,w), got {a.ndim} dims "
                            f"{a.shape}; give batch_index= for a batch axis")
    if _shareable(a):
        return a, True
    return _copy(a, what), False


def intake_batch(array: object, batch_index: int, what: str = "Mat(array, batch_index=...)") -> np.ndarray:
    """A copy with the batch axis moved to the front: (n,) + the item's numpy shape."""
    a = _real(as_array(array, what), what)
    if isinstance(batch_index, (bool, np.bool_)) or not isinstance(batch_index, (int, np.integer)):
        raise MatError(f"{what}: batch_index must be an int, got {type(batch_index).__name__}")
    if not 2 <= a.ndim <= 5:
        raise MatShapeError(f"{what}: a batched array has 2-5 dims (the batch axis and an item of 1-4 dims), "
                            f"got {a.ndim} dims {a.shape}")
    axis = int(batch_index) + a.ndim if batch_index < 0 else int(batch_index)
    if not 0 <= axis < a.ndim:
        raise MatShapeError(f"{what}: batch_index {batch_index} is out of range for an array of {a.ndim} dims")
    return _copy(np.moveaxis(a, axis, 0), what)
