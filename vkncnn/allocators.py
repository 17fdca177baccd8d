"""pyncnn's host allocators: Allocator, PoolAllocator, UnlockedPoolAllocator.

Scripts hand these to `opt.blob_allocator`, `ex.set_blob_allocator()` or `Mat(...,
allocator=)`; vkncnn keeps them there. Its own arrays come from numpy, so an allocator
does not decide where blob memory lives; called directly, fastMalloc/fastFree work as
ncnn's pool does: freed blocks are kept and handed out again to requests that fit.
"""

from __future__ import annotations

import threading

import numpy as np

from .array_checks import check_buffer, is_int
from .errors import ArgumentError, ArgumentTypeError


class Allocator:
    """Base of the host allocators (ncnn's Allocator): subclasses give fastMalloc/fastFree."""

    def fastMalloc(self, size: int) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} does not allocate")

    def fastFree(self, ptr: object) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not free")


class UnlockedPoolAllocator(Allocator):
    """A pool of byte blocks for one thread: fastMalloc(size) reuses a freed block when
    size is between `ratio` x the block's size and the block's size (ncnn's rule)."""

    def __init__(self) -> None:
        self._ratio = 0.0  # ncnn's default: any freed block large enough is reused
        self._free: list[np.ndarray] = []
        self._lent: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(view) -> (view, its block)

    def set_size_compare_ratio(self, src: float) -> None:
        if isinstance(src, (bool, np.bool_)) or not isinstance(src, (int, float, np.integer, np.floating)):
            raise ArgumentTypeError(f"set_size_compare_ratio() expects a number in 0..1, got {type(src).__name__}")
        if not 0.0 <= float(src) <= 1.0:
            raise ArgumentError(f"set_size_compare_ratio() expects a number in 0..1, got {src}")
        self._ratio = float(src)

    def fastMalloc(self, size: int) -> np.ndarray:
        """A writable uint8 block of `size` bytes (its base may be larger)."""
        if not is_int(size) or int(size) < 0:
            raise ArgumentError(f"fastMalloc() expects a size in bytes >= 0, got {size!r:.40}")
        size = int(size)
        for i, block in enumerate(self._free):
            if self._ratio * block.size <= size <= block.size:
                del self._free[i]
                return self._lend(block, size)
        check_buffer((size,), 1, f"{type(self).__name__}.fastMalloc({size})")
        return self._lend(np.empty(size, np.uint8), size)

    def _lend(self, block: np.ndarray, size: int) -> np.ndarray:
        view = block[:size]
        self._lent[id(view)] = (view, block)  # the view held: its id stays unique while lent
        return view

    def fastFree(self, ptr: object) -> None:
        view, block = self._lent.get(id(ptr), (None, None))
        if view is not ptr:
            raise ArgumentError(f"fastFree(): {type(ptr).__name__} was not allocated by this {type(self).__name__}")
        del self._lent[id(ptr)]
        self._free.append(block)

    def clear(self) -> None:
        """Drop the freed blocks (blocks still lent stay valid: numpy owns them)."""
        self._free.clear()


class PoolAllocator(UnlockedPoolAllocator):
    """UnlockedPoolAllocator that many threads may share."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def set_size_compare_ratio(self, src: float) -> None:
        with self._lock:
            super().set_size_compare_ratio(src)

    def fastMalloc(self, size: int) -> np.ndarray:
        with self._lock:
            return super().fastMalloc(size)

    def fastFree(self, ptr: object) -> None:
        with self._lock:
            super().fastFree(ptr)

    def clear(self) -> None:
        with self._lock:
            super().clear()
