"""Device buffers a net's dropped plans leave behind, kept for its next plans.

Every plan records into blob buffers of its own (a VkBlobAllocator per plan and item), so
that a replay never writes into another plan's blobs. A net whose shapes change at every
inference (a decoder fed its KV caches as Mats records a plan per extract, dozens per
step) would otherwise allocate and free every blob's device memory each time, and
vkAllocateMemory is slow on some drivers: ncnn sub-allocates from large blocks for that
reason. A dropped plan's allocator hands its buffers here (buffers no command buffer uses
any more: the plan's own are released first); the next plans' allocators take buffers of
their size class from here before asking the driver.
"""

from __future__ import annotations

import threading

from . import lifetime


def pop_fitting(free: dict, size_class: int):
    """From `free` (size class -> buffers), a buffer of this class, else of the smallest
    larger one up to twice it (sizes that grow a little at each inference, a decoder's
    caches, cross class bounds), or None."""
    fits = [c for c, buffers in free.items() if buffers and size_class <= c <= 2 * size_class]
    return free[min(fits)].pop() if fits else None


class BufferPool:
    """Whole device buffers by size class, up to `max_bytes` in all (beyond, they are freed).
    Each pooled buffer holds a reference on the device (lifetime.RefCounted), so that the
    device outlives them; the pool also registers with the device as its allocators do."""

    def __init__(self, vkdev, max_bytes: int) -> None:
        self.vkdev = vkdev
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._free: dict[int, list] = {}
        self._bytes = 0
        self.taken = 0  # buffers handed out again (tests read it)
        vkdev.register_allocator(self)

    @property
    def bytes_held(self) -> int:
        return self._bytes

    def take(self, size_class: int):
        """A pooled buffer for this size class (pop_fitting), or None. The buffer's own class
        is `raw.size_class`. Its device reference comes with it: the taker drops it
        (vkdev.release_ref) once its own handle holds the device."""
        with self._lock:
            raw = pop_fitting(self._free, size_class)
            if raw is None:
                return None
            self._bytes -= raw.size
            self.taken += 1
            return raw

    def put(self, raw) -> None:
        """Keep a buffer nothing uses any more, or free it when the pool is full."""
        with self._lock:
            keep = self._bytes + raw.size <= self.max_bytes
            if keep:
                self._free.setdefault(raw.size_class, []).append(raw)
                self._bytes += raw.size
                self.vkdev.retain()
        if not keep:
            raw.destroy()

    def clear(self) -> None:
        """Free every pooled buffer."""
        with self._lock:
            doomed = [raw for free in self._free.values() for raw in free]
            self._free, self._bytes = {}, 0
        for raw in doomed:
            raw.destroy()
            self.vkdev.release_ref()

    free_all = clear  # device teardown (VulkanDevice._destroy) calls it on what registered

    def __del__(self) -> None:
        # queued, not run: no locks in a finalizer (lifetime.py); the device outlives what
        # the pool holds, each buffer holding a reference on it
        try:
            lifetime.defer(self.clear)
        except Exception:  # modules already torn down at interpreter exit
            pass
