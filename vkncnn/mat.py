"""Mat: ncnn's tensor, backed by a numpy array.

Shape mapping is pyncnn's: numpy (w,), (h,w), (c,h,w), (c,d,h,w) are dims 1-4 with w
innermost. A batch of n items (ncnn's `Mat.n`) is stored with the batch axis in front,
(n,) + the item's shape; `batch(i)` is item i, a view.

`Mat(ndarray)` shares the array's memory where pyncnn does and where that is safe, and
copies otherwise (the rules: vkncnn/mat_intake.py). Views (`channel`, `row`, `range`,
`batch`, ...) write through to the Mat they come from, as ncnn's do. The numbers ncnn
reports about its memory layout (`cstep`, `total()`, `refcount`) are reported as ncnn
computes them, 16-byte channel alignment included, although the numpy storage itself is
dense.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from .array_checks import check_buffer, is_int
from .errors import MatAllocationError, MatError, MatShapeError
from .mat_intake import intake, intake_batch

if TYPE_CHECKING:
    from .allocators import Allocator

    # what the pixel members read (pixels.Pixels, which imports this module)
    _Pixels = np.ndarray | bytes | bytearray | memoryview

_STORAGE_DTYPES = {4: np.float32, 2: np.float16, 1: np.int8}
_FORMATS = {"f": np.float32, "i": np.int32, "d": np.float64}


def _numpy_shape(w: int, h: int, d: int, c: int, dims: int) -> tuple[int, ...]:
    return {0: (0,), 1: (w,), 2: (h, w), 3: (c, h, w), 4: (c, d, h, w)}[dims]


def _aligned_cstep(values: int, elemsize: int) -> int:
    """ncnn's channel step: a channel's bytes rounded up to 16, in elements."""
    return -(-values * elemsize // 16) * 16 // elemsize if elemsize else 0


def _sizes(shape: tuple, what: str) -> list[int]:
    """(w[,h[,d]],c) as ints, from separate ints or one tuple/list, as the binding takes them."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not 1 <= len(shape) <= 4:
        raise MatShapeError(f"{what}: shape must be 1, 2, 3 or 4 dims, not {len(shape)} (sizes are w[,h[,d]],c)")
    if not all(is_int(s) for s in shape) or any(int(s) < 0 for s in shape):
        raise MatError(f"{what}: sizes must be ints >= 0 (w[,h[,d]],c), got {tuple(shape)!r:.80}")
    return [int(s) for s in shape]


def _np_shape_of(sizes: list[int]) -> tuple[int, ...]:
    """numpy shape of ncnn sizes given as w / w,h / w,h,c / w,h,d,c."""
    if len(sizes) == 3:
        return (sizes[2], sizes[1], sizes[0])
    return tuple(reversed(sizes))


def _check_int_arg(value: object, what: str) -> int:
    if not is_int(value):
        raise MatError(f"{what} expects an int, got {type(value).__name__} {value!r:.40}")
    return int(value)


def _check_range(start: object, count: object, limit: int, what: str) -> tuple[int, int]:
    start, count = _check_int_arg(start, what), _check_int_arg(count, what)
    if start < 0 or count < 0 or start + count > limit:
        raise MatError(f"{what}: [{start}, {start + count}) is outside 0..{limit}")
    return start, count


class Mat:
    """Host tensor: dims, w, h, d, c, n, elemsize, elempack, cstep, and its data.

    ncnn's pixel members (from_pixels, from_pixels_resize, from_pixels_roi,
    from_pixels_roi_resize, to_pixels, to_pixels_resize, substract_mean_normalize) are
    defined in pixels.py, as ncnn defines them in mat_pixel*.cpp: the pixel helpers build
    on Mat, and this module only declares their signatures, for type checkers.
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

    if TYPE_CHECKING:  # the pixel members pixels.py adds to Mat, as type checkers should see them
        @staticmethod
        def from_pixels(pixels: _Pixels, type: int, w: int, h: int, stride: int = 0,
                        allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_resize(pixels: _Pixels, type: int, w: int, h: int, target_w: int, target_h: int, /, *,
                               allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_resize(pixels: _Pixels, type: int, w: int, h: int, stride: int, target_w: int,
                               target_h: int, /, *, allocator: Allocator | None = None) -> Mat:
            ...

        @staticmethod
        def from_pixels_resize(pixels: _Pixels, type: int, w: int, h: int, /, *args: int,
                               allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_roi(pixels: _Pixels, type: int, w: int, h: int, roix: int, roiy: int, roiw: int,
                            roih: int, /, *, allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_roi(pixels: _Pixels, type: int, w: int, h: int, stride: int, roix: int, roiy: int,
                            roiw: int, roih: int, /, *, allocator: Allocator | None = None) -> Mat:
            ...

        @staticmethod
        def from_pixels_roi(pixels: _Pixels, type: int, w: int, h: int, /, *args: int,
                            allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_roi_resize(pixels: _Pixels, type: int, w: int, h: int, roix: int, roiy: int, roiw: int,
                                   roih: int, target_w: int, target_h: int, /, *,
                                   allocator: Allocator | None = None) -> Mat:
            ...

        @overload
        @staticmethod
        def from_pixels_roi_resize(pixels: _Pixels, type: int, w: int, h: int, stride: int, roix: int,
                                   roiy: int, roiw: int, roih: int, target_w: int, target_h: int, /, *,
                                   allocator: Allocator | None = None) -> Mat:
            ...

        @staticmethod
        def from_pixels_roi_resize(pixels: _Pixels, type: int, w: int, h: int, /, *args: int,
                                   allocator: Allocator | None = None) -> Mat:
            ...

        def to_pixels(self, type: int, stride: int = 0) -> np.ndarray:
            ...

        def to_pixels_resize(self, type: int, target_w: int, target_h: int, stride: int = 0) -> np.ndarray:
            ...

        def substract_mean_normalize(self, mean: Sequence[float] | np.ndarray | None,
                                     norm: Sequence[float] | np.ndarray | None) -> None:
            ...

    # the storage state every constructor sets (_empty, _set, _share)
    _data: np.ndarray
    _cstep: int | None  # None: ncnn's aligned step
    _ref: list[int] | None  # the reference count shared by Mats of one buffer

    @overload
    def __init__(self, *sizes: int, elemsize: int = 4, elempack: int = 1,
                 allocator: Allocator | None = None) -> None:
        """Mat(), Mat(w), Mat(w, h), Mat(w, h, c), Mat(w, h, d, c): zero-filled."""

    @overload
    def __init__(self, shape: tuple[int, ...], /, *, elemsize: int = 4, elempack: int = 1,
                 allocator: Allocator | None = None) -> None:
        """Mat((w, h, c)): the sizes as one tuple."""

    @overload
    def __init__(self, mat: Mat, /) -> None:
        """Mat(m): m's data, one more reference (ncnn's copy constructor)."""

    @overload
    def __init__(self, array: npt.ArrayLike, /, *, batch_index: int | None = None) -> None:
        """Mat(array): its values, shared where safe (vkncnn/mat_intake.py); with batch_index=k,
        axis k holds the n items of a batch (a copy)."""

    def __init__(self, *args: Any, batch_index: int | None = None, elemsize: int = 4, elempack: int = 1,
                 allocator: Allocator | None = None) -> None:
        self._empty(allocator)
        if len(args) == 1 and isinstance(args[0], Mat):
            self._share(args[0])  # ncnn's Mat(Mat): the same data, one more reference
            return
        if len(args) == 1 and not is_int(args[0]) and not isinstance(args[0], (tuple, list)):
            single = args[0]
            if single is None or isinstance(single, (bool, float, complex, str, bytes, np.generic)):
                # a bare scalar is a mistaken size (pyncnn refuses it too), not one value of data;
                # one value as data is an array: Mat(np.array([v]))
                raise MatError(f"Mat() takes sizes (w[,h[,d]],c) as ints or an array of numbers, got "
                               f"{type(single).__name__} {single!r:.40}")
            if batch_index is not None:
                data = intake_batch(single, batch_index)
                self._set(data, data.ndim - 1, n=data.shape[0])
            else:
                data, shared = intake(single)
                self._set(data, data.ndim)
                self._foreign = shared
                if shared and data.ndim >= 3:
                    self._cstep = math.prod(data.shape[1:])  # pyncnn: a numpy buffer's own step
                self._ref = None  # external data, as pyncnn's Mat(array): no refcount
            return
        if batch_index is not None:
            raise MatError("Mat(): batch_index= goes with an array, not with sizes")
        if len(args) == 1 and isinstance(args[0], list):
            # pyncnn refuses lists; reading [0.5, 0.2] as a shape would silently truncate it
            data, _ = intake(args[0])
            self._set(data, data.ndim)
            return
        if args:
            self.create(*args, elemsize=elemsize, elempack=elempack, allocator=allocator)

    def _empty(self, allocator: Allocator | None = None) -> None:
        self.allocator = allocator
        self.elempack = 0  # ncnn's default Mat has elempack 0
        self._data = np.zeros(0, np.float32)
        self.dims = 0
        self._n = 1
        self._cstep = None
        self._ref = None
        self._shape_only = False
        self._foreign = False  # the memory is a user's array (Mat(ndarray) shares it)

    # -- construction -------------------------------------------------------
    @classmethod
    def from_array(cls, array: np.ndarray, dims: int | None = None, n: int = 1) -> Mat:
        """Wrap an array the runtime owns (no copy); dims defaults to its ndim (less the
        batch axis when n > 1)."""
        m = cls.__new__(cls)
        m._empty()
        if array.size == 0:  # a layer output without values is ncnn's default empty Mat
            m._data = array
            return m
        m._set(array, (array.ndim - (n > 1)) if dims is None else dims, n=n)
        return m

    def _set(self, data: np.ndarray, dims: int, n: int = 1, cstep: int | None = None) -> None:
        self._data, self.dims, self._n, self._cstep = data, dims, n, cstep
        self.elempack = 1 if dims else 0
        self._ref = [1] if dims else None
        self._shape_only = False

    def _share(self, other: Mat) -> None:
        self._data, self.dims, self._n, self._cstep = other._data, other.dims, other._n, other._cstep
        self.elempack, self.allocator, self._shape_only = other.elempack, other.allocator, other._shape_only
        self._foreign, self._ref = other._foreign, other._ref
        if self._ref is not None:
            self._ref[0] += 1

    def _view(self, data: np.ndarray, dims: int, cstep: int | None = None) -> Mat:
        """A Mat over part of this one's memory; like ncnn's views it holds no reference."""
        m = Mat.from_array(data, dims)
        m._cstep, m._ref, m.allocator, m._foreign = cstep, None, self.allocator, self._foreign
        return m

    def create(self, *shape: int | Sequence[int], elemsize: int = 4, elempack: int = 1, n: int = 1,
               allocator: Allocator | None = None) -> None:
        """create(w), create(w,h), create(w,h,c), create(w,h,d,c) or create((sizes)): zero-filled."""
        sizes = _sizes(shape, "Mat.create()")
        if not is_int(elemsize) or int(elemsize) not in _STORAGE_DTYPES:
            raise MatError(f"elemsize must be 1, 2 or 4, got {elemsize!r:.40}")
        if not is_int(elempack) or int(elempack) != 1:
            raise MatError(f"host Mats are unpacked: elempack must be 1, got {elempack!r:.40}")
        if not is_int(n) or int(n) < 1:
            raise MatError(f"n (the batch size) must be an int >= 1, got {n!r:.40}")
        n = int(n)
        np_shape = ((n,) if n > 1 else ()) + _np_shape_of(sizes)
        check_buffer(np_shape, int(elemsize), f"Mat{tuple(sizes)}" + (f" x {n}" if n > 1 else ""))
        try:
            data = np.zeros(np_shape, _STORAGE_DTYPES[int(elemsize)])
        except MemoryError:
            raise MatAllocationError(f"Mat{tuple(sizes)}: the machine could not give "
                                     f"{math.prod(np_shape) * int(elemsize)} bytes") from None
        self.release()
        self._set(data, len(sizes), n=n)
        self.allocator = allocator

    def create_like(self, other: Mat, *args: Any, allocator: Allocator | None = None) -> None:
        """create_like(m[, n][, allocator]): zeros with m's shape and elemsize, n items."""
        if not isinstance(other, Mat):
            raise MatError(f"create_like() expects a Mat, got {type(other).__name__}")
        n = int(args[0]) if args and is_int(args[0]) else other._n
        if args and not is_int(args[0]):
            allocator = args[0]
        if other.dims == 0:
            self.release()
            return
        self.create(*other._sizes(), elemsize=other.elemsize if other.elemsize in _STORAGE_DTYPES else 4,
                    n=n, allocator=allocator)

    def _sizes(self) -> list[int]:
        return [self.w, self.h, self.d, self.c][:self.dims] if self.dims != 3 else [self.w, self.h, self.c]

    # -- shape ------------------------------------------------------------------
    def _item(self) -> np.ndarray:
        """Item 0 (the whole data when n == 1): what pyncnn's buffer protocol exposes."""
        return self._data[0] if self._n > 1 else self._data

    def _item_shape(self) -> tuple[int, ...]:
        return self._data.shape[1:] if self._n > 1 else self._data.shape

    @property
    def w(self) -> int:
        return int(self._item_shape()[-1]) if self.dims else 0

    @property
    def h(self) -> int:
        return int(self._item_shape()[-2]) if self.dims >= 2 else (1 if self.dims else 0)

    @property
    def d(self) -> int:
        return int(self._item_shape()[-3]) if self.dims == 4 else (1 if self.dims else 0)

    @property
    def c(self) -> int:
        return int(self._item_shape()[-self.dims]) if self.dims >= 3 else (1 if self.dims else 0)

    @property
    def n(self) -> int:
        return self._n

    @property
    def elemsize(self) -> int:
        return int(self._data.dtype.itemsize) if self.dims else 0

    @property
    def cstep(self) -> int:
        if not self.dims:
            return 0
        if self._cstep is not None:
            return self._cstep
        return _aligned_cstep(self.w * self.h * self.d, self.elemsize)

    @property
    def refcount(self) -> int | None:
        return None if self._ref is None else self._ref[0]

    def addref(self) -> None:
        if self._ref is not None:
            self._ref[0] += 1

    def release(self) -> None:
        """Drop this Mat's reference and its data: it becomes an empty Mat."""
        if self._ref is not None:
            self._ref[0] -= 1
        self._empty(self.allocator)

    def __del__(self) -> None:
        ref = getattr(self, "_ref", None)
        if ref is not None:
            ref[0] -= 1

    def elembits(self) -> int:
        return self.elemsize * 8 if self.elempack else 0

    def empty(self) -> bool:
        return self.dims == 0 or self._data.size == 0 or self._shape_only

    def total(self) -> int:
        return self.cstep * self.c

    def shape(self) -> Mat:
        """A Mat with this one's dims, sizes and n but no data, as ncnn's Mat::shape()."""
        m = Mat()
        if self.dims:
            item = np.broadcast_to(np.float32(0), self._item_shape())
            m._set(np.broadcast_to(item, self._data.shape) if self._n > 1 else item, self.dims, n=self._n)
            m._shape_only, m._ref = True, None
        return m

    def __len__(self) -> int:
        return self.w

    # -- data --------------------------------------------------------------------
    def numpy(self, format: str = "", batch_index: int | None = None) -> np.ndarray:
        """The data with pyncnn's shape, sharing memory. format 'f' / 'i' reads 4-byte data as
        float32 / int32 (the bits, as pyncnn), 'd' gives float64 values (a copy). Of a batch
        this is item 0, as in pyncnn; batch_index=k stacks all n items along axis k (a copy)."""
        if format not in ("", "f", "i", "d", None):
            raise MatError(f"numpy(format=) expects '', 'f', 'i' or 'd', got {format!r:.20}")
        if batch_index is not None:
            items = [self._formatted(self._data[b] if self._n > 1 else self._data, format)
                     for b in range(self._n)]
            if not is_int(batch_index) or not -(self.dims + 1) <= int(batch_index) <= self.dims:
                raise MatShapeError(f"numpy(batch_index=): expected an axis in {-(self.dims + 1)}..{self.dims}, "
                                    f"got {batch_index!r:.20}")
            return np.stack(items, axis=int(batch_index))
        return self._formatted(self._item(), format)

    def _formatted(self, data: np.ndarray, format: str | None) -> np.ndarray:
        if self._shape_only:
            raise MatError("this Mat holds only a shape (Mat.shape()), no data")
        if not format:
            return data
        want = np.dtype(_FORMATS[format])
        if data.dtype == want:
            return data
        if format != "d" and data.dtype.itemsize == want.itemsize:
            return data.view(want)  # the same bits, as pyncnn's buffer format
        return data.astype(want)

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        data = self._formatted(self._item(), "")
        if dtype is None and copy is not True:
            return data
        return np.array(data, dtype=dtype, copy=True)

    def fill(self, value: float) -> None:
        if self._shape_only:
            raise MatError("fill(): this Mat holds only a shape (Mat.shape()), no data")
        try:
            self._data[...] = value
        except (TypeError, ValueError) as e:
            raise MatError(f"fill() expects a number, got {type(value).__name__} ({e})") from None

    def clone(self, allocator: Allocator | None = None) -> Mat:
        m = Mat.from_array(self._data.copy(), self.dims, n=self._n)
        m.allocator = allocator
        return m

    def clone_from(self, other: Mat | npt.ArrayLike, allocator: Allocator | None = None) -> None:
        other = other if isinstance(other, Mat) else Mat(other)
        self.release()
        self._set(other._data.copy(), other.dims, n=other._n)
        self.allocator = allocator

    def reshape(self, *shape: int | Sequence[int], allocator: Allocator | None = None) -> Mat:
        """The same values in new sizes (w / w,h / w,h,c / w,h,d,c), each item of a batch
        alike; a view where the memory allows. An empty Mat reshapes to an empty Mat."""
        sizes = _sizes(shape, "Mat.reshape()")
        if self.dims == 0:
            return Mat()
        np_shape = _np_shape_of(sizes)
        if math.prod(np_shape) != math.prod(self._item_shape()):  # exact: an int64 product can wrap
            raise MatError(f"cannot reshape {self._item_shape()} ({math.prod(self._item_shape())} values) "
                           f"to w,h,.. {tuple(sizes)}")
        data = self._data.reshape(((self._n,) if self._n > 1 else ()) + np_shape)
        m = Mat.from_array(data, len(sizes), n=self._n)
        m._foreign = self._foreign
        if np.shares_memory(data, self._data) and self._ref is not None:
            m._ref = self._ref  # ncnn's reshape copies the Mat header: one more reference
            self._ref[0] += 1
        m.allocator = allocator if allocator is not None else self.allocator
        return m

    # -- views -------------------------------------------------------------------
    def batch(self, b: int) -> Mat:
        """Item b of the batch, a view (n == 1)."""
        b = _check_int_arg(b, "batch()")
        if not 0 <= b < self._n:
            raise MatError(f"batch() expects an int in 0..{self._n - 1}, got {b}")
        return self._view(self._data[b] if self._n > 1 else self._data, self.dims, self._cstep)

    def channel(self, q: int) -> Mat:
        if self.dims < 3:
            return self
        q = _check_int_arg(q, "channel()")
        if not 0 <= q < self.c:
            raise MatError(f"channel() expects an int in 0..{self.c - 1}, got {q}")
        return self._view(self._item()[q], self.dims - 1)

    def channel_range(self, c: int, channels: int) -> Mat:
        if self.dims < 3:
            raise MatError(f"channel_range() needs a Mat of 3 or 4 dims, this one has {self.dims}")
        c, channels = _check_range(c, channels, self.c, "channel_range()")
        return self._view(self._item()[c:c + channels], self.dims, self.cstep)

    def _planes(self) -> np.ndarray:
        """The (depth, h, w) planes depth() and depth_range() index: a 3-dim Mat's channels,
        a 4-dim Mat's first channel's depths."""
        if self.dims < 3:
            raise MatError(f"depth() and depth_range() need a Mat of 3 or 4 dims, this one has {self.dims}")
        return self._item()[0] if self.dims == 4 else self._item()

    def depth(self, z: int) -> Mat:
        planes = self._planes()
        z = _check_int_arg(z, "depth()")
        if not 0 <= z < planes.shape[0]:
            raise MatError(f"depth() expects an int in 0..{planes.shape[0] - 1}, got {z}")
        return self._view(planes[z], 2)

    def depth_range(self, z: int, depths: int) -> Mat:
        planes = self._planes()
        z, depths = _check_range(z, depths, planes.shape[0], "depth_range()")
        return self._view(planes[z:z + depths], 3)

    def _rows(self) -> np.ndarray:
        item = self._item()
        return item.reshape(-1, self.w) if self.w else item.reshape(0, 0)

    def row(self, y: int) -> memoryview | np.ndarray:
        """Row y, writable, as pyncnn gives it: a memoryview whose items are Python numbers
        (fp16 data, which memoryview cannot index, comes as a numpy view)."""
        rows = self._rows()
        if not is_int(y) or not 0 <= int(y) < rows.shape[0]:
            raise MatError(f"row() expects an int in 0..{rows.shape[0] - 1}, got {y!r:.40}")
        row = rows[int(y)]
        return row if row.dtype == np.float16 else memoryview(row)

    def row_range(self, y: int, rows: int) -> Mat:
        all_rows = self._rows()
        y, rows = _check_range(y, rows, all_rows.shape[0], "row_range()")
        return self._view(all_rows[y:y + rows], 2, self.w * rows)

    def range(self, x: int, n: int) -> Mat:
        flat = self._item().reshape(-1)
        x, n = _check_range(x, n, flat.size, "range()")
        return self._view(flat[x:x + n], 1)

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
        batch = f" n={self._n}" if self._n > 1 else ""
        return (f"<vkncnn.Mat dims={self.dims} w={self.w} h={self.h} d={self.d} c={self.c}{batch} "
                f"elemsize={self.elemsize}>")


def input_values(mat: Mat) -> tuple[np.ndarray, int]:
    """(float32 values, n) a net reads from a Mat, batch axis in front when n > 1: the Mat's
    own array where vkncnn allocated it, else a float32 copy, so that no layer ever writes
    into memory a user's array owns."""
    data = mat._data
    if mat._foreign or data.dtype != np.float32:
        data = np.array(data, dtype=np.float32, copy=True)
    return data, mat._n
