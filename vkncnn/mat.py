"""Mat: ncnn's tensor, backed by a numpy array that it owns.

Shape mapping is pyncnn's: numpy (w,), (h,w), (c,h,w), (c,d,h,w) are dims 1-4 with
w innermost. Unlike pyncnn, `Mat(ndarray)` never reads bytes the wrong way: it
respects strides and dtype by converting to float32 (a copy), and it owns that copy,
so the Mat stays valid whatever happens to the array, and nothing done to the Mat
(fill, normalize, a layer writing in place) can touch the user's array.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import MatAllocationError, MatError
from .memory_budget import default_budget, human

_STORAGE_DTYPES = {4: np.float32, 2: np.float16, 1: np.int8}
MAX_ELEMENTS = 1 << 33  # the most values any buffer vkncnn allocates may hold


def _numpy_shape(w: int, h: int, d: int, c: int, dims: int) -> tuple[int, ...]:
    return {0: (0,), 1: (w,), 2: (h, w), 3: (c, h, w), 4: (c, d, h, w)}[dims]


def is_int(value) -> bool:
    """An int as pybind's int caster takes it: Python or numpy integers, never bool or float."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_buffer(shape, itemsize: int, what: str) -> None:
    """Refuse, before allocating, a buffer larger than MAX_ELEMENTS values or than the
    machine's per-buffer memory budget (vkncnn/memory_budget.py: half the memory the
    process can have), the budget every layer allocation is held to: beyond it numpy
    would raise MemoryError or, where the kernel overcommits, hand out pages that the
    OOM killer takes back later by killing the process."""
    count = math.prod(int(n) for n in shape)  # exact: an int64 product can wrap
    if count > MAX_ELEMENTS:
        raise MatAllocationError(f"{what}: {count} values, more than the {MAX_ELEMENTS} (2^33) any buffer "
                                 "may hold")
    nbytes, budget = count * itemsize, default_budget()
    if nbytes > budget:
        raise MatAllocationError(f"{what}: needs {nbytes} bytes ({human(nbytes)}), more than this machine's "
                                 f"memory budget of {budget} bytes ({human(budget)}; vkncnn/memory_budget.py)")


def as_array(value, what: str) -> np.ndarray:
    """np.asarray with what numpy throws for odd input (ragged lists, objects whose
    __array__ fails) made a MatError."""
    try:
        return np.asarray(value)
    except MemoryError:
        raise MatAllocationError(f"{what}: not enough memory to read {type(value).__name__} as an array") from None
    except Exception as e:  # the foreign errors an arbitrary object can cause
        raise MatError(f"{what}: expected an array of numbers, got {type(value).__name__} that numpy cannot "
                       f"read as one ({type(e).__name__}: {e})") from None


def _to_float32(array) -> np.ndarray:
    """A C-contiguous float32 copy of any real-valued array, or a clear error."""
    a = as_array(array, "Mat(array)")
    if a.dtype.kind not in "biuf":
        raise MatError(
            f"Mat needs a real-valued array (bool, int, uint or float), got dtype {a.dtype}")
    if a.ndim > 4:
        raise MatError(f"Mat holds 1-4 dims (w / h,w / c,h,w / c,d,h,w), got shape {a.shape}")
    if a.ndim == 0:
        a = a.reshape(1)
    check_buffer(a.shape, 4, f"Mat(array of shape {a.shape})")  # a broadcast view can be tiny and its copy huge
    try:
        if a.dtype.kind == "f" and a.dtype.itemsize > 4:
            finite = np.isfinite(a)
            if np.any(np.abs(a[finite]) > np.finfo(np.float32).max):
                raise MatError("array has values beyond float32's range; cannot convert without loss")
        return np.array(a, dtype=np.float32, order="C", copy=True)
    except MemoryError:
        raise MatAllocationError(f"Mat(array): not enough memory for a float32 copy of shape {a.shape}") from None


class Mat:
    """Host tensor: dims, w, h, d, c, elemsize, elempack, cstep, and its data.

    ncnn's pixel members (from_pixels, from_pixels_resize, from_pixels_roi,
    from_pixels_roi_resize, to_pixels, to_pixels_resize, substract_mean_normalize) are
    defined in pixels.py, as ncnn defines them in mat_pixel*.cpp: the pixel helpers build
    on Mat, and this module knows nothing of them.
    """

    class PixelType:
        PIXEL_CONVERT_SHIFT = 16
        PIXEL_FORMAT_MASK = 0x0000FFFF
        PIXEL_CONVERT_MASK = 0xFFFF0000
        PIXEL_RGB = 1
        PIXEL_BGR = 2
        PIXEL_GRAY = 3
        PIXEL_RGBA = 4
        PIXEL_BGRA = 5
        PIXEL_RGB2BGR = PIXEL_RGB | (PIXEL_BGR << 16)
        PIXEL_RGB2GRAY = PIXEL_RGB | (PIXEL_GRAY << 16)
        PIXEL_RGB2RGBA = PIXEL_RGB | (PIXEL_RGBA << 16)
        PIXEL_RGB2BGRA = PIXEL_RGB | (PIXEL_BGRA << 16)
        PIXEL_BGR2RGB = PIXEL_BGR | (PIXEL_RGB << 16)
        PIXEL_BGR2GRAY = PIXEL_BGR | (PIXEL_GRAY << 16)
        PIXEL_BGR2RGBA = PIXEL_BGR | (PIXEL_RGBA << 16)
        PIXEL_BGR2BGRA = PIXEL_BGR | (PIXEL_BGRA << 16)
        PIXEL_GRAY2RGB = PIXEL_GRAY | (PIXEL_RGB << 16)
        PIXEL_GRAY2BGR = PIXEL_GRAY | (PIXEL_BGR << 16)
        PIXEL_GRAY2RGBA = PIXEL_GRAY | (PIXEL_RGBA << 16)
        PIXEL_GRAY2BGRA = PIXEL_GRAY | (PIXEL_BGRA << 16)
        PIXEL_RGBA2RGB = PIXEL_RGBA | (PIXEL_RGB << 16)
        PIXEL_RGBA2BGR = PIXEL_RGBA | (PIXEL_BGR << 16)
        PIXEL_RGBA2GRAY = PIXEL_RGBA | (PIXEL_GRAY << 16)
        PIXEL_RGBA2BGRA = PIXEL_RGBA | (PIXEL_BGRA << 16)
        PIXEL_BGRA2RGB = PIXEL_BGRA | (PIXEL_RGB << 16)
        PIXEL_BGRA2BGR = PIXEL_BGRA | (PIXEL_BGR << 16)
        PIXEL_BGRA2GRAY = PIXEL_BGRA | (PIXEL_GRAY << 16)
        PIXEL_BGRA2RGBA = PIXEL_BGRA | (PIXEL_RGBA << 16)

    def __init__(self, *args, elemsize: int = 4, elempack: int = 1, allocator=None) -> None:
        self.allocator = allocator
        self.elempack = 1 if args else 0  # ncnn's default Mat has elempack 0
        self._data: np.ndarray = np.zeros(0, np.float32)
        self.dims = 0
        if len(args) == 1 and isinstance(args[0], Mat):
            self._set(args[0]._data, args[0].dims)  # shares data, as ncnn's Mat(Mat) does
            return
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]  # Mat((w, h, c)): pyncnn's shape tuple
        if len(args) == 1 and not is_int(args[0]):
            single = args[0]
            if single is None or isinstance(single, (bool, float, complex, str, bytes, np.generic)):
                # a bare scalar is a mistaken size (pyncnn refuses it too), not one value of data;
                # one value as data is an array: Mat(np.array([v]))
                raise MatError(f"Mat() takes sizes (w[,h[,d]],c) as ints or an array of numbers, got "
                               f"{type(single).__name__} {single!r:.40}")
            # anything else single is data (a list too: pyncnn refuses lists, and reading
            # [0.5, 0.2] as a shape would silently truncate it to 0 x 0)
            data = _to_float32(single)
            self._set(data, data.ndim)  # an empty array keeps its dims, as pyncnn's Mat does
            return
        if args:
            self.create(*args, elemsize=elemsize)

    # -- construction -------------------------------------------------------
    @classmethod
    def from_array(cls, array: np.ndarray, dims: int | None = None) -> Mat:
        """Wrap an array the runtime owns (no copy); dims defaults to its ndim."""
        m = cls.__new__(cls)
        m.allocator = None
        # a layer output without values is ncnn's default empty Mat (dims 0, elempack 0)
        m._set(array, 0 if array.size == 0 else (array.ndim if dims is None else dims))
        m.elempack = 1 if m.dims else 0
        return m

    def _set(self, data: np.ndarray, dims: int) -> None:
        self._data = data
        self.dims = dims

    def create(self, *shape, elemsize: int = 4, elempack: int = 1, allocator=None) -> None:
        """create(w), create(w,h), create(w,h,c), create(w,h,d,c): zero-filled."""
        if not 1 <= len(shape) <= 4:
            raise MatError(f"Mat shape takes 1-4 sizes (w[,h[,d]],c), got {shape!r:.80}")
        if not all(is_int(s) for s in shape):
            raise MatError(f"Mat sizes must be ints (w[,h[,d]],c), got {shape!r:.80}")
        sizes = [int(s) for s in shape]
        if any(s < 0 for s in sizes):
            raise MatError(f"Mat sizes must be >= 0, got {shape}")
        if not is_int(elemsize) or int(elemsize) not in _STORAGE_DTYPES:
            raise MatError(f"elemsize must be 1, 2 or 4, got {elemsize!r:.40}")
        w, h, d, c = (sizes + [1, 1, 1])[:4] if len(sizes) < 4 else sizes
        if len(sizes) == 3:
            w, h, c, d = sizes[0], sizes[1], sizes[2], 1
        np_shape = _numpy_shape(w, h, d, c, len(sizes))
        check_buffer(np_shape, int(elemsize), f"Mat{tuple(sizes)}")
        try:
            data = np.zeros(np_shape, _STORAGE_DTYPES[int(elemsize)])
        except MemoryError:
            raise MatAllocationError(f"Mat{tuple(sizes)}: the machine could not give "
                                     f"{math.prod(np_shape) * int(elemsize)} bytes") from None
        self._set(data, len(sizes))
        self.elempack = 1

    def create_like(self, other: Mat, allocator=None) -> None:
        if not isinstance(other, Mat):
            raise MatError(f"create_like() expects a Mat, got {type(other).__name__}")
        self._set(np.zeros_like(other._data), other.dims)

    # -- shape ------------------------------------------------------------------
    @property
    def w(self) -> int:
        return int(self._data.shape[-1]) if self.dims else 0

    @property
    def h(self) -> int:
        return int(self._data.shape[-2]) if self.dims >= 2 else (1 if self.dims else 0)

    @property
    def d(self) -> int:
        return int(self._data.shape[1]) if self.dims == 4 else (1 if self.dims else 0)

    @property
    def c(self) -> int:
        return int(self._data.shape[0]) if self.dims >= 3 else (1 if self.dims else 0)

    @property
    def n(self) -> int:
        return 1

    @property
    def elemsize(self) -> int:
        return int(self._data.dtype.itemsize) if self.dims else 0

    @property
    def cstep(self) -> int:
        return self.w * self.h * self.d if self.dims >= 3 else self.w * self.h

    def elembits(self) -> int:
        return self.elemsize * 8

    def empty(self) -> bool:
        return self.dims == 0 or self._data.size == 0

    def total(self) -> int:
        return self.cstep * self.c

    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape) if self.dims else ()

    def __len__(self) -> int:
        return self.w

    # -- data --------------------------------------------------------------------
    def numpy(self, format: str = "") -> np.ndarray:
        """A view of the data with pyncnn's shape; format 'f'/'i'/'d' reinterprets like pyncnn."""
        if format in ("", None):
            return self._data
        if format == "f":
            return self._data.astype(np.float32, copy=False)
        if format == "i":
            return self._data.view(np.int32) if self.elemsize == 4 else self._data.astype(np.int32)
        if format == "d":
            return self._data.astype(np.float64)
        raise MatError(f"numpy(format=) expects '', 'f', 'i' or 'd', got {format!r}")

    def __array__(self, dtype=None, copy=None):
        if dtype is None and copy is not True:
            return self._data
        return np.array(self._data, dtype=dtype, copy=True)

    def fill(self, value: float) -> None:
        try:
            self._data[...] = value
        except (TypeError, ValueError) as e:
            raise MatError(f"fill() expects a number, got {type(value).__name__} ({e})") from None

    def clone(self, allocator=None) -> Mat:
        return Mat.from_array(self._data.copy(), self.dims)

    def clone_from(self, other: Mat, allocator=None) -> None:
        other = other if isinstance(other, Mat) else Mat(other)
        self._set(other._data.copy(), other.dims)

    def reshape(self, *shape, allocator=None) -> Mat:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not 1 <= len(shape) <= 4:
            raise MatError(f"reshape takes 1-4 sizes (w[,h[,d]],c), got {shape!r:.80}")
        if not all(is_int(s) for s in shape) or any(int(s) < 0 for s in shape):
            raise MatError(f"reshape sizes must be ints >= 0 (w[,h[,d]],c), got {shape!r:.80}")
        sizes = [int(s) for s in shape]
        if len(sizes) == 3:
            np_shape = (sizes[2], sizes[1], sizes[0])
        else:
            np_shape = tuple(reversed(sizes))
        if math.prod(np_shape) != self._data.size:  # exact: an int64 product can wrap
            raise MatError(f"cannot reshape {self.shape()} ({self._data.size} values) to w,h,.. {shape}")
        return Mat.from_array(self._data.reshape(np_shape), len(sizes))

    def channel(self, q: int) -> Mat:
        if self.dims < 3:
            return self
        if not is_int(q) or not 0 <= int(q) < self.c:
            raise MatError(f"channel() expects an int in 0..{self.c - 1}, got {q!r:.40}")
        return Mat.from_array(self._data[int(q)], self.dims - 1)

    def row(self, y: int) -> np.ndarray:
        rows = self._data.size // self.w if self.w else 0
        if not is_int(y) or not 0 <= int(y) < rows:
            raise MatError(f"row() expects an int in 0..{rows - 1}, got {y!r:.40}")
        return self._data.reshape(-1, self.w)[int(y)]

    def __getitem__(self, i: int) -> float:
        return float(self._data.flat[i])  # IndexError past the end: iteration stops on it

    def __setitem__(self, i: int, v: float) -> None:
        try:
            value = float(v)
        except (TypeError, ValueError):
            raise MatError(f"Mat[{i!r:.20}] = v expects a number, got {type(v).__name__}") from None
        # .flat writes through even when the data is a strided view (reshape would copy)
        self._data.flat[i] = value

    def __repr__(self) -> str:
        return (f"<vkncnn.Mat dims={self.dims} w={self.w} h={self.h} d={self.d} c={self.c} "
                f"elemsize={self.elemsize}>")
