"""A decoder's KV cache kept on the device between steps (an addition to ncnn's API).

ncnn's decoder form hands every SDPA layer its cached keys and values as inputs (cache_kN,
cache_vN) and returns them grown by the step's tokens (out_cache_kN, ...). Fed as host Mats,
the whole cache crosses to the device and back at every step. Here each cache blob is a
KvCacheMat: a device buffer of (groups, capacity, width) rows, of which the first `length`
hold the cache and the rest are headroom. An SDPA layer handed one (layers/sdpa.py) writes the
step's rows in place, at the row the cache's position buffer names, and attends over all
`capacity` rows: the attention mask gives the rows past the length a large negative weight,
so they count for nothing (they hold zeros: rows a longer, earlier sequence left are zeroed).

The position lives in host-visible memory that the host writes before each run, so a plan
recorded for one step replays for the next: the step's shapes, (tokens, capacity), stay the
same until the cache must grow. Growing copies the rows into larger buffers on the device
and zero-fills the rest; nothing of the cache crosses to the host.
"""

from __future__ import annotations

import numpy as np

from ..errors import GpuError, ShapeError
from .vulkan.allocator import VkBlobAllocator, VkStagingAllocator
from .vulkan.command import VkCompute, count_upload
from .vulkan.vkmat import VkMat


class KvCacheMat(VkMat):
    """One cache blob: (groups, capacity, width) pack1 rows on the device, and the row the next
    step's first token goes to (`position`, shared by the decoder's caches).

    It starts without a buffer: the first SDPA layer that writes into it (bind()) gives it
    the groups, width and scalar size of its keys or values, and zeroed rows.
    """

    def __init__(self, name: str, capacity: int, position: VkMat, allocator) -> None:
        super().__init__(0, capacity, 1, 0, dims=3, elemsize=4, elempack=1)
        self.name = name
        self.position = position
        self.allocator = allocator

    def binding_key(self) -> tuple:
        return super().binding_key() + self.position.binding_key()

    def bind(self, groups: int, width: int, elemsize: int) -> None:
        """Give the cache its shape (the keys or values written into it decide) and zeroed rows;
        an allocated cache must already have that shape."""
        if not self.empty():
            if (self.c, self.w, self.elemsize) != (groups, width, elemsize):
                raise ShapeError(f"device KV cache {self.name!r}: holds {self.c} heads x {self.w} wide "
                                 f"({self.elemsize}-byte scalars), the step writes {groups} x {width} "
                                 f"({elemsize}-byte)")
            return
        fresh = VkMat.create(width, self.h, 1, groups, dims=3, elemsize=elemsize, elempack=1,
                             allocator=self.allocator)
        _run_once(self.allocator.vkdev, lambda cmd: cmd.record_fill(fresh))
        self._take(fresh)

    def with_capacity(self, capacity: int) -> VkMat | None:
        """A new buffer of `capacity` rows and the same heads and width (None before bind())."""
        if self.empty():
            return None
        return VkMat.create(self.w, capacity, 1, self.c, dims=3, elemsize=self.elemsize, elempack=1,
                            allocator=self.allocator)

    def adopt(self, other: VkMat | None, capacity: int) -> None:
        """Use other's buffer (already filled) from now on, or just `capacity` rows when unbound;
        the old buffer goes back (views that recorded plans hold keep it until the plans go)."""
        if other is None:
            self.h, self.cstep = capacity, self.w * capacity
            return
        self.release()
        self._take(other)

    def _take(self, other: VkMat) -> None:
        """Take over other's buffer and shape (other is left empty)."""
        self.w, self.h, self.c, self.elemsize = other.w, other.h, other.c, other.elemsize
        self.cstep = other.cstep
        self.data, other.data = other.data, None


class DeviceKvCache:
    """The cache blobs of one decoder on the device, their capacity in rows and the write position."""

    def __init__(self, vkdev, names: list[str], capacity: int) -> None:
        if capacity < 1:
            raise GpuError(f"DeviceKvCache: capacity must be at least 1 row, got {capacity}")
        self.vkdev = vkdev
        self.allocator = VkBlobAllocator(vkdev)
        # host-visible and coherent: the host writes the position, the shaders read it, no copy
        self._staging = VkStagingAllocator(vkdev)
        self.position = VkMat.create(1, dims=1, elemsize=4, allocator=self._staging)
        self._position = self.position.data.mapped[:4].view(np.int32)
        self._position[0] = 0
        self.capacity = capacity
        self.mats = [KvCacheMat(name, capacity, self.position, self.allocator) for name in names]

    def set_position(self, row: int) -> None:
        """The row the next step's first token is written to (the number of rows cached)."""
        if not 0 <= row < self.capacity:
            raise GpuError(f"KV cache position {row} outside its capacity of {self.capacity} rows")
        self._position[0] = row
        count_upload(4)

    def grow(self, capacity: int) -> None:
        """Make room for `capacity` rows, keeping the rows held (a copy on the device, the rest
        zeroed). On failure the cache is as it was."""
        if capacity <= self.capacity:
            return
        fresh = [m.with_capacity(capacity) for m in self.mats]
        try:
            def record(cmd: VkCompute) -> None:
                for m, f in zip(self.mats, fresh):
                    if f is not None:
                        cmd.record_fill(f)
                        cmd.record_copy_channels(m, f)
            _run_once(self.vkdev, record)
        except BaseException:
            for f in fresh:
                if f is not None:
                    f.release()
            raise
        for m, f in zip(self.mats, fresh):
            m.adopt(f, capacity)
        self.capacity = capacity

    def zero_rows(self, first: int, stop: int) -> None:
        """Zero rows [first, stop) of every cache blob: rows a longer sequence left behind.

        Masked rows count for nothing only while they are finite (0 x inf is NaN), and rows a
        sequence left may not be. Word rounding (record_fill) may also zero the scalar before
        `first`, so row `first - 1` must be one the next step writes."""
        def record(cmd: VkCompute) -> None:
            for m in self.mats:
                cmd.record_fill(m, 0, (first, stop))  # nothing for a cache not bound yet
        if stop > first:
            _run_once(self.vkdev, record)

    def read(self, index: int, rows: int) -> np.ndarray:
        """The first `rows` rows of cache blob `index`, (groups, rows, width) float32: a download,
        for looking at the cache (a step never needs it)."""
        mat = self.mats[index]
        if mat.empty():
            return np.zeros((0, rows, 0), np.float32)
        box = []
        _run_once(self.vkdev, lambda cmd: box.append(cmd.record_download(mat)))
        return np.ascontiguousarray(box[0].array[:, :rows])

    def release(self) -> None:
        """Give the buffers back (views that recorded plans hold keep theirs until the plans go)."""
        for m in self.mats:
            m.release()
        self.position.release()
        self._position = None
        self.allocator.clear()
        self._staging.clear()


def _run_once(vkdev, record) -> None:
    """Record with `record(cmd)` into a one-shot VkCompute, run it and wait."""
    cmd = VkCompute(vkdev)
    try:
        record(cmd)
        cmd.submit_and_wait()
    finally:
        cmd.release()
