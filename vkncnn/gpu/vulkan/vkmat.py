"""VkMat: a tensor in a device buffer, with ncnn's shape fields, and its host (numpy) layout.

ncnn's meaning of the fields: dims 1..4, w/h/d/c, and the packing axis (w for dims 1,
h for dims 2, c for dims 3/4) counts *items* of `elempack` scalars each, so a (c=12,h,w)
tensor in pack4 has c=3. elemsize is bytes per item (4*elempack fp32, 2*elempack fp16).

Unlike ncnn's host Mat there is no 16-byte channel alignment: cstep = w*h*d (dims 3/4),
so the buffer is exactly the numpy array's packed bytes. In numpy terms the buffer
holds, C-order:

    dims 1: (W/p, p)   dims 2: (H/p, w, p)   dims 3: (C/p, h, w, p)   dims 4: (C/p, d, h, w, p)

(without the trailing p axis for pack1): the packing axis is numpy axis 0 in every case,
which is what `pack_into` / `unpack` below rely on.
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import GpuError
from ...memory_budget import check_alloc
from . import lifetime


class VkMat:
    """A device tensor: shape fields + a VkBufferMemory from `allocator` (None when empty)."""

    def __init__(self, w: int = 0, h: int = 1, d: int = 1, c: int = 1, dims: int = 0, elemsize: int = 4,
                 elempack: int = 1, allocator=None) -> None:
        if dims not in (0, 1, 2, 3, 4):
            raise GpuError(f"VkMat: dims must be 1..4, got {dims}")
        self.w, self.h, self.d, self.c = int(w), int(h), int(d), int(c)
        self.dims = dims
        self.elemsize = int(elemsize)
        self.elempack = int(elempack)
        self.allocator = allocator
        self.cstep = self.w * self.h * self.d
        self.data = None  # VkBufferMemory
        if allocator is not None and dims > 0 and self.total() > 0:
            # an allocator that carries a net's opt.memory_budget holds every device blob to it;
            # without one, the allocator's own limit (the device's heaps) is the only one
            if getattr(allocator, "memory_budget", None):
                check_alloc(allocator, self.numpy_shape(), self.scalar_size(), "a device buffer")
            self.data = allocator.fastMalloc(self.total() * self.elemsize)
            self.data.refcount = 1

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def create(cls, w: int, h: int = 1, d: int = 1, c: int = 1, dims: int = 0, elemsize: int = 4,
               elempack: int = 1, allocator=None) -> VkMat:
        """A new VkMat with its buffer from `allocator` (fields as in the constructor).

        dims is required: it decides which axis is packed, so it is never guessed.
        """
        if dims not in (1, 2, 3, 4):
            raise GpuError(f"VkMat.create: dims must be 1..4 (it decides the packing axis), got {dims}")
        if allocator is None:
            raise GpuError("VkMat.create needs an allocator (e.g. opt.blob_vkallocator)")
        return cls(w, h, d, c, dims, elemsize, elempack, allocator)

    @classmethod
    def create_like(cls, other: VkMat, allocator=None) -> VkMat:
        """Same shape, elemsize and elempack as `other` (allocator defaults to other's)."""
        return cls.create(other.w, other.h, other.d, other.c, other.dims, other.elemsize, other.elempack,
                          allocator if allocator is not None else other.allocator)

    @classmethod
    def for_numpy_shape(cls, shape: tuple, elempack: int, scalar_size: int, allocator) -> VkMat:
        """The VkMat that holds an unpacked numpy array of `shape` (ncnn dims = ndim) in elempack."""
        shape = tuple(int(s) for s in shape)
        if not 1 <= len(shape) <= 4:
            raise GpuError(f"a GPU tensor has 1 to 4 dims, got numpy shape {shape}")
        items = -(-shape[0] // elempack)  # the packing axis is numpy axis 0
        es = scalar_size * elempack
        if len(shape) == 1:
            return cls(items, 1, 1, 1, 1, es, elempack, allocator)
        if len(shape) == 2:
            return cls(shape[1], items, 1, 1, 2, es, elempack, allocator)
        if len(shape) == 3:
            return cls(shape[2], shape[1], 1, items, 3, es, elempack, allocator)
        return cls(shape[3], shape[2], shape[1], items, 4, es, elempack, allocator)

    def reshape(self, w: int, h: int = 1, d: int = 1, c: int = 1, dims: int = 0) -> VkMat:
        """A view with another shape on the same buffer (no copy), for elempack 1 tensors.

        With the dense layout a pack1 tensor is just its scalars in C order, so any shape
        with the same count is the same bytes. Pack4 data would need a repack: convert to
        pack1 first (convert_packing).
        """
        if self.elempack != 1:
            raise GpuError(f"VkMat.reshape needs elempack 1, got {self.elempack} (convert_packing first)")
        view = VkMat(w, h, d, c, dims, self.elemsize, 1, None)
        if view.total() != self.total():
            raise GpuError(f"VkMat.reshape: {self.total()} scalars cannot become {view.numpy_shape()}")
        view.allocator = self.allocator
        view.data = self.data
        if self.data is not None:
            self.data.refcount += 1  # the buffer goes back when the last view is released
        return view

    # -- queries ----------------------------------------------------------------------------
    def total(self) -> int:
        """Number of items (of elempack scalars each)."""
        return self.cstep * self.c if self.dims else 0

    def nbytes(self) -> int:
        return self.total() * self.elemsize

    def empty(self) -> bool:
        return self.data is None or self.total() == 0

    def scalar_size(self) -> int:
        return self.elemsize // self.elempack

    def scalar_dtype(self) -> np.dtype:
        return np.dtype({4: np.float32, 2: np.float16, 1: np.int8}.get(self.scalar_size(), np.uint8))

    def numpy_shape(self) -> tuple:
        """Unpacked numpy shape: (w,), (h,w), (c,h,w) or (c,d,h,w) in scalars."""
        p = self.elempack
        return {1: (self.w * p,), 2: (self.h * p, self.w), 3: (self.c * p, self.h, self.w),
                4: (self.c * p, self.d, self.h, self.w)}.get(self.dims, (0,))

    def packed_shape(self) -> tuple:
        """numpy shape of the buffer contents (the packed items, then elempack if > 1)."""
        shape = {1: (self.w,), 2: (self.h, self.w), 3: (self.c, self.h, self.w),
                 4: (self.c, self.d, self.h, self.w)}.get(self.dims, (0,))
        return shape + (self.elempack,) if self.elempack > 1 else shape

    def binding_key(self) -> tuple:
        """What a recorded command that binds this VkMat depends on: its buffer and its shape.
        A plan handed this VkMat as an input replays only for a VkMat with an equal key."""
        bm = self.data
        return (None if bm is None else (bm.key, bm.offset), self.dims, self.w, self.h, self.d, self.c,
                self.elemsize, self.elempack)

    @property
    def buffer(self):
        return None if self.data is None else self.data.buffer

    @property
    def buffer_offset(self) -> int:
        return 0 if self.data is None else self.data.offset

    @property
    def buffer_capacity(self) -> int:
        return 0 if self.data is None else self.data.capacity

    # -- lifetime ---------------------------------------------------------------------------
    def release(self) -> None:
        """Return the buffer to its allocator (when no other VkMat shares it); self becomes empty."""
        bm, self.data = self.data, None
        if bm is not None:
            bm.refcount -= 1
            if bm.refcount <= 0 and self.allocator is not None:
                self.allocator.fastFree(bm)

    def __del__(self) -> None:
        if self.data is not None:
            try:  # queued, not run: no locks in a finalizer (lifetime.py)
                lifetime.defer(self.release)
            except Exception:  # modules already torn down at interpreter exit
                pass

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.numpy_shape())
        state = "empty" if self.empty() else f"{self.nbytes()}B"
        return f"<VkMat dims={self.dims} {shape} elempack={self.elempack} elemsize={self.elemsize} {state}>"


# -- storage precision ------------------------------------------------------------------------
def use_fp16_storage(opt, vkdev) -> bool:
    """Tensors are stored as fp16 when the option asks and the device can (ncnn's rule)."""
    return bool(opt is not None and getattr(opt, "use_fp16_storage", False)
                and vkdev.info.support_fp16_storage())


def storage_elemsize(opt, vkdev, elempack: int = 1) -> int:
    """Bytes per item for a float tensor: 2*elempack with fp16 storage, else 4*elempack."""
    return (2 if use_fp16_storage(opt, vkdev) else 4) * elempack


def storage_dtype(host_dtype, opt, vkdev) -> np.dtype:
    """The scalar type a host array is stored as on the device."""
    host_dtype = np.dtype(host_dtype)
    if host_dtype.kind == "f":
        return np.dtype(np.float16 if use_fp16_storage(opt, vkdev) else np.float32)
    if host_dtype.kind in "iu" and host_dtype.itemsize == 1:
        return host_dtype  # int8 / uint8 tensors stay 8-bit
    if host_dtype.kind == "u":
        return np.dtype(np.uint32)
    return np.dtype(np.int32)


# -- host layout ------------------------------------------------------------------------------
# Axis orders as plain transposes, not np.moveaxis: these run on every inference's input and
# output, where moveaxis's argument normalisation cost more than the small copies themselves.
@functools.cache
def _pack_axes(ndim: int) -> tuple[int, ...]:
    """(items, p, ...) -> (items, ..., p)."""
    return (0,) + tuple(range(2, ndim)) + (1,)


@functools.cache
def _unpack_axes(ndim: int) -> tuple[int, ...]:
    """(items, ..., p) -> (items, p, ...)."""
    return (0, ndim - 1) + tuple(range(1, ndim - 1))


def pack_into(dst: np.ndarray, src: np.ndarray, elempack: int) -> None:
    """Write unpacked `src` into `dst` (shape = VkMat.packed_shape()), casting to dst.dtype.

    Packing moves groups of `elempack` consecutive entries of numpy axis 0 to a new last
    axis; a partial last group is zero-padded. One vectorised copy, cast included. Values
    beyond fp16's range become infinities without a warning, as ncnn's fp16 storage makes them.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        _pack_into(dst, src, elempack)


def _pack_into(dst: np.ndarray, src: np.ndarray, elempack: int) -> None:
    if elempack == 1:
        np.copyto(dst.reshape(src.shape), src, casting="unsafe")
        return
    n = src.shape[0]
    full = n // elempack
    rest = src.shape[1:]
    if full:
        grouped = src[: full * elempack].reshape((full, elempack) + rest)
        np.copyto(dst[:full], grouped.transpose(_pack_axes(grouped.ndim)), casting="unsafe")
    if full < dst.shape[0]:
        dst[full:] = 0
        tail = n - full * elempack
        if tail:
            np.copyto(dst[full, ..., :tail], np.moveaxis(src[full * elempack:], 0, -1), casting="unsafe")


def unpack(packed: np.ndarray, elempack: int, n: int | None = None, dtype=np.float32) -> np.ndarray:
    """Inverse of pack_into: a new `dtype` array in unpacked numpy shape (first n of axis 0)."""
    if elempack == 1:
        out = packed.astype(dtype, copy=True)
    else:
        items, rest = packed.shape[0], packed.shape[1:-1]
        out = np.empty((items * elempack,) + rest, dtype)
        # one pass: transpose (items, ..., p) -> (items, p, ...) and cast
        np.copyto(out.reshape((items, elempack) + rest), packed.transpose(_unpack_axes(packed.ndim)), casting="unsafe")
    return out if n is None or n == out.shape[0] else out[:n].copy()
