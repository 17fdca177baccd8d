"""ModelBin: the weights of a .bin file, read in the order layers ask for them.

A .bin has no index: each layer's `load_model` asks for tensors in a fixed order
(`load(w, h, c, type)`), and the file is their concatenation. type 1 is raw fp32;
type 0 starts with a 4-byte storage flag (fp32, fp16, int8 or an 8-bit table).
Every tensor is padded to 4 bytes.

Sizes are checked against the bytes left before anything is allocated, so a
damaged or hostile file can never make us allocate more than it holds. A source of
unknown length (a stream, a user's reader) is read a chunk at a time, so memory
grows with the bytes that really arrive, not with what a size field claims; zeros
(DataReaderFromEmpty) are bounded by the machine's memory budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from ..errors import WeightError
from ..memory_budget import default_budget, human
from .datareader import DataReader, DataReaderFromEmpty, DataReaderFromMemory, read_exactly

FLAG_FP32 = 0x00000000
FLAG_FP32_ALT = 0x0002C056
FLAG_FP16 = 0x01306B47
FLAG_INT8 = 0x000D4B38

# No single tensor in any real model comes near this; it bounds what a reader of
# unknown length (a stream, a user DataReader) can make us allocate.
MAX_TENSOR_ELEMENTS = 1 << 31


def _align4(n: int) -> int:
    return (n + 3) & ~3


class ModelBin:
    """Base: `load(w, type)`, `load(w, h, type)`, `load(w, h, c, type)` as in ncnn."""

    layer_name: str | None  # the layer whose weights are being read, for messages (Net sets it)

    def load(self, *dims_and_type: int) -> np.ndarray:
        if not 2 <= len(dims_and_type) <= 5:
            raise WeightError(f"load() takes 1-4 dims and a type, got {dims_and_type}")
        *dims, type_ = dims_and_type
        dims = [int(d) for d in dims]
        if any(d < 0 for d in dims):
            raise WeightError(f"{self._where()}negative weight size {dims}")
        n = math.prod(dims)  # exact: an int64 product of hostile sizes could wrap to a small one
        flat = self.load_flat(n, int(type_))
        return flat.reshape(dims[::-1])

    def load_flat(self, n: int, type_: int) -> np.ndarray:  # pragma: no cover - interface
        """n values of load type `type_` (0 tagged, 1 raw fp32); subclasses say where from."""
        raise WeightError(f"{type(self).__name__} cannot load weights (it implements no load_flat)")

    def _where(self) -> str:
        return ""


class ModelBinFromDataReader(ModelBin):
    """Reads tensors from a DataReader; the current layer name goes into errors."""

    def __init__(self, reader: DataReader, name: str = "<bin>") -> None:
        self.reader = reader
        self.name = name
        self.layer_name: str | None = None
        self.offset = 0

    def _where(self) -> str:
        at = f" (layer {self.layer_name!r})" if self.layer_name else ""
        return f"{self.name}: offset {self.offset}{at}: "

    def _check_budget(self, nbytes: int, what: str) -> None:
        if isinstance(self.reader, DataReaderFromEmpty):
            # zeros cost what they claim: a tensor beyond the memory budget cannot be made
            if nbytes > min(MAX_TENSOR_ELEMENTS * 4, default_budget()):
                raise WeightError(f"{self._where()}{what} of {nbytes} bytes ({human(nbytes)}) is more than "
                                  f"this machine's memory budget of {human(default_budget())}")
            return
        remaining = getattr(self.reader, "remaining", None)
        if remaining is not None and nbytes > remaining:
            raise WeightError(
                f"{self._where()}{what} needs {nbytes} bytes but only {remaining} remain "
                f"(file truncated, or the .param does not match this .bin)")
        if nbytes > MAX_TENSOR_ELEMENTS * 4:
            raise WeightError(f"{self._where()}{what} of {nbytes} bytes is absurdly large")

    def _read(self, nbytes: int, what: str) -> bytes:
        self._check_budget(nbytes, what)
        data = read_exactly(self.reader, nbytes)
        if len(data) != nbytes:
            raise WeightError(
                f"{self._where()}{what}: expected {nbytes} bytes, file ended after {len(data)}")
        self.offset += nbytes
        return data

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        if n > MAX_TENSOR_ELEMENTS:
            raise WeightError(f"{self._where()}tensor of {n} elements is absurdly large")
        if type_ == 1:
            return np.frombuffer(self._read(4 * n, f"raw fp32 tensor [{n}]"), "<f4").astype(np.float32)
        if type_ != 0:
            raise WeightError(f"{self._where()}unknown load type {type_} (expected 0 or 1)")
        flag_bytes = self._read(4, "storage flag")
        flag = int.from_bytes(flag_bytes, "little")
        if flag in (FLAG_FP32, FLAG_FP32_ALT):
            return np.frombuffer(self._read(4 * n, f"fp32 tensor [{n}]"), "<f4").astype(np.float32)
        if flag == FLAG_FP16:
            raw = self._read(_align4(2 * n), f"fp16 tensor [{n}]")
            return np.frombuffer(raw, "<f2", count=n).astype(np.float32)
        if flag == FLAG_INT8:
            raw = self._read(_align4(n), f"int8 tensor [{n}]")
            # int8 stays int8: only an int8-aware layer knows the scales to undo it.
            return np.frombuffer(raw, np.int8, count=n).copy()
        # Any other flag: the legacy 8-bit codebook, 256 fp32 entries then n indices.
        table = np.frombuffer(self._read(256 * 4, "quantization table"), "<f4")
        index = np.frombuffer(self._read(_align4(n), f"8-bit indices [{n}]"), np.uint8, count=n)
        return table[index].astype(np.float32)


class ModelBinFromMatArray(ModelBin):
    """Serves weights from a list of arrays, one per load() call (tests, create_layer)."""

    def __init__(self, arrays: Iterable[npt.ArrayLike]) -> None:
        self._arrays = [np.asarray(a, dtype=np.float32) for a in arrays]
        self._next = 0

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        if self._next >= len(self._arrays):
            raise WeightError(f"weight #{self._next} requested but only {len(self._arrays)} given")
        a = self._arrays[self._next].ravel()
        self._next += 1
        if a.size != n:
            raise WeightError(f"weight #{self._next - 1}: expected {n} values, got {a.size}")
        return a.copy()


def model_bin_from_bytes(data: bytes, name: str = "<memory>") -> ModelBinFromDataReader:
    return ModelBinFromDataReader(DataReaderFromMemory(data, name), name)
