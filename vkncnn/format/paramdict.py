"""ParamDict: a layer's numbered parameters (ids 0..31) with ncnn's get-with-default.

Values are kept with the type the file gave them: int, float, str, or a numpy
array (int32 or float32). Binary .param files carry untyped 4-byte words; those
are stored as `RawWord` and read as int or float depending on the default asked
with, exactly as ncnn reinterprets the same bits.
"""

from __future__ import annotations

import struct
from typing import Any, TypeGuard, overload

import numpy as np

from ..errors import ParamError
from ..mat import Mat

MAX_PARAM_COUNT = 32

# what a param holds: a number (RawWord from a binary .param), a string or an int32/float32 array
ParamValue = int | float | str | np.ndarray


class RawWord(int):
    """A 4-byte value from a binary param file whose type is decided on read."""

    def as_float(self) -> float:
        return struct.unpack("<f", struct.pack("<i", int(self)))[0]


class RawArray(np.ndarray):
    """An int32 array from a binary param file; read as float32 when asked for floats."""


class MatArray(np.ndarray):
    """A float32 array set from a Mat (`pd.set(id, mat)`): ncnn's type 4, read back as a Mat."""


def _is_mat(value: object) -> TypeGuard[Mat]:
    return isinstance(value, Mat)


def _as_raw_array(words: np.ndarray) -> RawArray:
    return np.asarray(words, dtype="<i4").view(RawArray)


class ParamDict:
    def __init__(self) -> None:
        self._values: dict[int, ParamValue] = {}

    # -- writing -------------------------------------------------------------
    def set(self, key: int, value: float | str | list[float] | tuple[float, ...] | np.ndarray | Mat) -> None:
        if not 0 <= int(key) < MAX_PARAM_COUNT:
            raise KeyError(f"param id {key} out of range 0..{MAX_PARAM_COUNT - 1}")
        if isinstance(value, Mat):
            value = np.array(value.numpy(), dtype=np.float32).ravel().view(MatArray)
        elif isinstance(value, (list, tuple)):
            is_float = any(isinstance(v, float) for v in value)
            value = np.asarray(value, dtype=np.float32 if is_float else np.int32)
        elif isinstance(value, np.ndarray) and not isinstance(value, RawArray):
            value = value.astype(np.float32 if value.dtype.kind == "f" else np.int32).ravel()
        self._values[int(key)] = value

    def set_raw_array(self, key: int, words: np.ndarray) -> None:
        self._values[int(key)] = _as_raw_array(words)

    def clear(self) -> None:
        self._values.clear()

    # -- reading -------------------------------------------------------------
    def has(self, key: int) -> bool:
        return int(key) in self._values

    def keys(self) -> list[int]:
        return sorted(self._values)

    def type(self, key: int) -> int:
        """ncnn's type code: 0 absent, 2 int, 3 float, 5 int array, 6 float array, 7 string."""
        v = self._values.get(int(key))
        if v is None:
            return 0
        if isinstance(v, str):
            return 7
        if isinstance(v, MatArray):
            return 4
        if isinstance(v, np.ndarray):
            return 6 if v.dtype == np.float32 else 5
        return 3 if isinstance(v, float) else 2

    @overload
    def get(self, key: int, default: int = 0) -> int:
        ...

    @overload
    def get(self, key: int, default: float) -> float:
        ...

    @overload
    def get(self, key: int, default: str) -> str:
        ...

    @overload
    def get(self, key: int, default: np.ndarray) -> np.ndarray:
        ...

    @overload
    def get(self, key: int, default: Mat) -> Mat:
        ...

    def get(self, key: int, default: Any = 0) -> Any:
        """The value of `key`, converted to the type of `default`, or `default`.

        A value of the wrong kind (an array where a number is expected, a string, a
        non-finite float asked for as an int) is a ParamError naming the key.
        """
        v = self._values.get(int(key))
        if v is None:
            return default
        if isinstance(default, str):
            return v if isinstance(v, str) else default
        if isinstance(default, np.ndarray):
            return self._get_array(v, default)
        if _is_mat(default):
            if not isinstance(v, np.ndarray):
                return default
            return Mat(np.array(v, dtype=np.float32))
        if isinstance(v, np.ndarray):
            if v.size == 1:  # `0=3,` style single-element arrays read as the scalar
                v = v.item()
            else:
                raise ParamError(f"param {key}: expected a number, got an array of {v.size} values")
        if isinstance(v, str):
            raise ParamError(f"param {key}: expected a number, got the string {v[:40]!r}")
        if isinstance(default, float):
            return v.as_float() if isinstance(v, RawWord) else float(v)
        if isinstance(v, float):
            if not np.isfinite(v):
                raise ParamError(f"param {key}: expected an integer, got {v}")
            return int(v)
        return int(v)

    @staticmethod
    def _get_array(v: ParamValue, default: np.ndarray) -> np.ndarray:
        if not isinstance(v, np.ndarray):
            return default
        want_float = isinstance(default, np.ndarray) and default.dtype.kind == "f"
        if isinstance(v, RawArray):
            base = np.asarray(v).view(np.int32)
            return base.view(np.float32).copy() if want_float else base.copy()
        if want_float:
            return v.astype(np.float32)
        return v.copy()

    def get_float_array(self, key: int) -> np.ndarray:
        return self.get(key, np.zeros(0, np.float32))

    def get_int_array(self, key: int) -> np.ndarray:
        return self.get(key, np.zeros(0, np.int32))

    def __repr__(self) -> str:
        return f"ParamDict({self._values!r})"
