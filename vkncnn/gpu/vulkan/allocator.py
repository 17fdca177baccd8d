"""Device memory: buffers for blobs, staging and weights (ncnn's VkAllocator family).

    VkBlobAllocator     device-local buffers for activations. Freed buffers go to free
                        lists keyed by a size class, so the next inference (or the next
                        layer of this one) reuses them instead of calling vkAllocateMemory.
    VkStagingAllocator  host-visible + coherent buffers, mapped once for their whole life:
                        the host writes uploads / reads downloads through a numpy view.
    VkWeightAllocator   device-local weights: sub-allocated from 8 MB blocks (drivers cap
                        the number of allocations, often at 4096), freed all at once by
                        clear() when the Net goes away, as ncnn does.

`fastMalloc(size) -> VkBufferMemory`, `fastFree(bm)`, `clear()` (frees what is pooled),
`bytes_held` (device memory this allocator owns; 0 after everything is released and
cleared: the leak check). Asking for more than the device can give raises GpuError
naming the size, before Vulkan is asked (the validation layer would flag it otherwise).
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from ...errors import GpuError
from . import lifetime
from .buffer_pool import pop_fitting
from .image_memory import VkImageMemory
from .vk import check, vk

_WEIGHT_BLOCK = 8 << 20


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


_keys = itertools.count()


class VkBufferMemory:
    """One VkBuffer range: (buffer, offset, capacity), its memory and, if mapped, a uint8 view.

    It does not point back to its allocator (whoever frees it, a VkMat or a recorder, holds
    the allocator): that keeps allocator -> free list -> buffer free of reference cycles, so
    memory is returned as soon as the last Python reference goes.
    """

    __slots__ = (
        "__weakref__",
        "buffer",
        "capacity",
        "dead",
        "key",
        "mapped",
        "memory",
        "offset",
        "pins",
        "refcount",
        "retains",
    )

    def __init__(self, buffer, memory, offset: int, capacity: int, mapped) -> None:
        self.buffer = buffer
        self.memory = memory
        self.offset = offset
        self.capacity = capacity
        self.mapped = mapped      # np.uint8 view of the mapping, or None
        self.key = next(_keys)
        self.refcount = 0         # VkMats sharing it; the last release returns it
        self.pins = 0             # recorders whose command buffers use it: clear() keeps it
        self.dead = False         # its memory was freed (allocator cleared): never touch again
        self.retains = False      # holds a device reference while handed out

    def __repr__(self) -> str:
        return f"<VkBufferMemory offset={self.offset} capacity={self.capacity}{' dead' if self.dead else ''}>"


class _RawBuffer:
    """A VkBuffer with its own VkDeviceMemory (the unit every allocator below hands out or splits)."""

    def __init__(self, vkdev, size: int, required: int, preferred: int = 0, avoided: int = 0,
                 map_memory: bool = False) -> None:
        ffi, lib = vk.ffi, vk.lib
        self.vkdev = vkdev
        self.size = size
        self.size_class = size  # as asked (self.size becomes the driver's, maybe larger)
        dev = vkdev.handle
        usage = (vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                 | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        _check_size(vkdev, size, required)
        info = ffi.new("VkBufferCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, "size": size, "usage": usage,
            "sharingMode": vk.VK_SHARING_MODE_EXCLUSIVE})
        buf = ffi.new("VkBuffer*")
        check(lib.vkCreateBuffer(dev, info, ffi.NULL, buf), f"vkCreateBuffer ({_human(size)})")
        self.buffer = buf[0]
        req = ffi.new("VkMemoryRequirements*")
        lib.vkGetBufferMemoryRequirements(dev, self.buffer, req)
        type_index = vkdev.find_memory_type(req.memoryTypeBits, required, preferred, avoided)
        if type_index < 0:
            lib.vkDestroyBuffer(dev, self.buffer, ffi.NULL)
            raise GpuError(f"'{vkdev.info.device_name()}' has no memory type with flags {required:#x}")
        alloc = ffi.new("VkMemoryAllocateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, "allocationSize": req.size,
            "memoryTypeIndex": type_index})
        mem = ffi.new("VkDeviceMemory*")
        result = lib.vkAllocateMemory(dev, alloc, ffi.NULL, mem)
        if result != 0:
            lib.vkDestroyBuffer(dev, self.buffer, ffi.NULL)
            if result in (vk.VK_ERROR_OUT_OF_DEVICE_MEMORY, vk.VK_ERROR_OUT_OF_HOST_MEMORY):
                raise GpuError(f"out of device memory: could not allocate {size} bytes ({_human(size)}) "
                               f"on '{vkdev.info.device_name()}'")
            check(result, f"vkAllocateMemory ({_human(size)})")
        self.memory = mem[0]
        self.size = req.size
        _count_live(self.size)
        check(lib.vkBindBufferMemory(dev, self.buffer, self.memory, 0), "vkBindBufferMemory")
        self.mapped = None
        host_visible = vkdev.info.memory_types()[type_index][0] & vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
        if map_memory and host_visible:  # a script may set `mappable` on a device-local allocator
            ptr = ffi.new("void**")
            check(lib.vkMapMemory(dev, self.memory, 0, size, 0, ptr), "vkMapMemory")
            self.mapped = np.frombuffer(ffi.buffer(ptr[0], size), dtype=np.uint8)

    def destroy(self) -> None:
        ffi, lib = vk.ffi, vk.lib
        if self.vkdev.destroyed:
            return
        self.mapped = None  # the view must not outlive the mapping
        lib.vkDestroyBuffer(self.vkdev.handle, self.buffer, ffi.NULL)
        lib.vkFreeMemory(self.vkdev.handle, self.memory, ffi.NULL)  # also unmaps
        _count_live(-self.size)


_live_lock = threading.Lock()
_live_bytes = 0
_peak_bytes = 0


def _count_live(delta: int) -> None:
    global _live_bytes, _peak_bytes
    with _live_lock:
        _live_bytes += delta
        _peak_bytes = max(_peak_bytes, _live_bytes)


def live_device_bytes() -> int:
    """Bytes of device memory vkncnn holds right now, all allocators together (leak tests),
    once the releases that finalizers queued have run."""
    lifetime.run_deferred()
    return _live_bytes


def reset_peak_device_bytes() -> None:
    """Start the peak that peak_device_bytes() reports again from what is held now."""
    global _peak_bytes
    with _live_lock:
        _peak_bytes = _live_bytes


def peak_device_bytes() -> int:
    """The most device memory vkncnn held at once since the last reset_peak_device_bytes()."""
    return _peak_bytes


def _check_size(vkdev, size: int, required: int) -> None:
    """Refuse sizes the device cannot hold, with a message instead of a driver error."""
    info = vkdev.info
    heaps = info.memory_heaps()
    limit = max((heaps[h][0] for flags, h in info.memory_types() if flags & required == required), default=0)
    if info.max_memory_allocation_size():
        limit = min(limit, info.max_memory_allocation_size())
    if size > limit:
        raise GpuError(f"out of device memory: asked for {size} bytes ({_human(size)}) on "
                       f"'{info.device_name()}', which allows at most {_human(limit)} in one allocation")


def _size_class(size: int) -> int:
    """Round up to one of 4 classes per power of two (<= 25% waste), at least 256 bytes."""
    size = max(size, 256)
    step = max(256, (1 << (size.bit_length() - 1)) // 4)
    return -(-size // step) * step


class VkAllocator:
    """Base: pooled whole buffers, one VkDeviceMemory each, free lists by size class."""

    required = 0
    preferred = 0
    avoided = 0
    mappable = False
    coherent = False

    def __init__(self, vkdev, pool=None) -> None:
        vkdev.check_alive(type(self).__name__)
        self.vkdev = vkdev
        self.pool = pool  # a BufferPool new buffers come from first, and hand_back() returns to
        self._lock = threading.Lock()
        self._free: dict[int, list] = {}
        self._raw: dict[int, _RawBuffer] = {}  # bm.key -> its raw buffer, for every bm made
        self._bms = weakref.WeakValueDictionary()  # bm.key -> bm: marked dead at teardown
        self._bytes_held = 0
        self._bytes_in_use = 0
        vkdev.register_allocator(self)

    @property
    def bytes_held(self) -> int:
        """Device memory this allocator owns (in use + pooled)."""
        return self._bytes_held

    @property
    def bytes_in_use(self) -> int:
        return self._bytes_in_use

    @property
    def buffer_memory_type_index(self) -> int:
        """The memory type this allocator's buffers come from (pyncnn exposes it)."""
        return self.vkdev.find_memory_type(~0, self.required, self.preferred, self.avoided)

    @property
    def image_memory_type_index(self) -> int:
        """The memory type images come from (device-local; pyncnn exposes it)."""
        return self.vkdev.find_memory_type(~0, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)

    def fastMalloc(self, size: int, *image_args, retain_device: bool = True):
        """fastMalloc(size) -> VkBufferMemory; fastMalloc(w, h, c, elemsize, elempack) ->
        VkImageMemory, as pyncnn's two overloads."""
        if image_args:
            return self._image(size, *image_args)
        size = int(size)
        if size <= 0:
            raise GpuError(f"{type(self).__name__}.fastMalloc: size must be positive, got {size}")
        self.vkdev.check_alive(f"{type(self).__name__}.fastMalloc")
        cls = _size_class(size)
        with self._lock:
            bm = pop_fitting(self._free, cls)
        pooled = None
        if bm is None:
            raw = pooled = self.pool.take(cls) if self.pool is not None else None
            if raw is None:
                raw = _RawBuffer(self.vkdev, cls, self.required, self.preferred, self.avoided, self.mappable)
            bm = VkBufferMemory(raw.buffer, raw.memory, 0, raw.size_class, raw.mapped)
            with self._lock:
                self._raw[bm.key] = raw
                self._bms[bm.key] = bm
                self._bytes_held += raw.size_class
        with self._lock:
            self._bytes_in_use += bm.capacity
        bm.refcount = 0
        if retain_device:
            bm.retains = True
            self.vkdev.retain()
        if pooled is not None:
            self.vkdev.release_ref()  # the pool's reference on the device, handed over with it
        return bm

    def _image(self, w: int, h: int, c: int, elemsize: int, elempack: int) -> VkImageMemory | None:
        self.vkdev.check_alive(f"{type(self).__name__}.fastMalloc")
        return VkImageMemory(self.vkdev, w, h, c, elemsize, elempack, self.image_memory_type_index)

    def fastFree(self, bm: VkBufferMemory) -> None:
        """Give a buffer (or an image) back; a buffer goes to the free list for reuse."""
        if isinstance(bm, VkImageMemory):
            bm.destroy()
            return
        if bm.dead:
            return
        with self._lock:
            if bm.key not in self._raw:
                # free_all() already destroyed it: when garbage collection finalizes an
                # allocator and a recorder together, the weak references free_all uses to
                # mark buffers dead are gone before the recorder hands its buffers back
                bm.dead = True
                stale = True
            else:
                self._bytes_in_use -= bm.capacity
                self._free.setdefault(bm.capacity, []).append(bm)
                stale = False
        if stale:
            bm.mapped = None
        self._drop_device_ref(bm)

    def _drop_device_ref(self, bm: VkBufferMemory) -> None:
        if bm.retains:
            bm.retains = False
            self.vkdev.release_ref()

    def clear(self) -> None:
        """Free every pooled buffer (buffers still in use, or pinned by a recorder, stay)."""
        with self._lock:
            doomed = []
            for cls, lst in self._free.items():
                keep = [bm for bm in lst if bm.pins > 0]
                doomed += [bm for bm in lst if bm.pins <= 0]
                self._free[cls] = keep
        for bm in doomed:
            self._destroy_bm(bm)

    def _destroy_bm(self, bm: VkBufferMemory) -> None:
        with self._lock:
            raw = self._raw.pop(bm.key, None)
            if raw is None:
                return
            self._bytes_held -= raw.size
        bm.dead = True
        bm.mapped = None
        raw.destroy()

    def free_all(self) -> None:
        """Device teardown: free everything, in use or not (nothing may use it any more)."""
        self._give_up_all(lambda raw: raw.destroy())

    def hand_back(self) -> None:
        """Like free_all (the handles given out are marked dead: a VkMat kept past its plan
        must not read the next plan's data), but the buffers go to the pool, when there is
        one, for the next allocators."""
        if self.pool is None:
            self.free_all()
        else:
            self._give_up_all(self.pool.put)

    def _give_up_all(self, dispose) -> None:
        """Every buffer to dispose(raw), then every handle given out marked dead."""
        with self._lock:
            self._free.clear()
            raws, self._raw = self._raw, {}
            bms = list(self._bms.values())
            self._bytes_held = self._bytes_in_use = 0
        for raw in raws.values():  # first: the handles' references may be the device's last
            dispose(raw)
        for bm in bms:
            bm.dead = True
            bm.mapped = None
            self._drop_device_ref(bm)

    def __del__(self) -> None:
        try:  # queued, not run: no locks in a finalizer (lifetime.py)
            lifetime.defer(self._free_if_device_lives)
        except Exception:  # modules already torn down at interpreter exit
            pass

    def _free_if_device_lives(self) -> None:
        if not self.vkdev.destroyed:
            self.free_all()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} held={_human(self._bytes_held)} in_use={_human(self._bytes_in_use)}>"


class VkBlobAllocator(VkAllocator):
    """Device-local activations and scratch, pooled."""

    @property
    def required(self):
        return vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT


class VkStagingAllocator(VkAllocator):
    """Host-visible, coherent (no flush/invalidate calls needed), persistently mapped."""

    mappable = True
    coherent = True

    @property
    def required(self):
        return vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT

    @property
    def preferred(self):
        return vk.VK_MEMORY_PROPERTY_HOST_CACHED_BIT  # downloads read it: cached reads are fast

    @property
    def avoided(self):
        return vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT  # on discrete GPUs that is scarce BAR memory


class VkWeightStagingAllocator(VkStagingAllocator):
    """Host-visible staging for weight uploads (ncnn's VkWeightStagingAllocator); weights
    are buffers only, so an image request gives None, as in ncnn."""

    def _image(self, *args) -> None:
        return None


class VkWeightAllocator(VkAllocator):
    """Device-local weights, bump-allocated in 8 MB blocks; clear() frees them all."""

    def __init__(self, vkdev, block_size: int = _WEIGHT_BLOCK) -> None:
        super().__init__(vkdev)
        self.block_size = block_size
        self._blocks: list[_RawBuffer] = []
        self._cursor = 0  # next free byte in the last block
        self._live: list[VkBufferMemory] = []
        self._align = max(16, vkdev.info.min_storage_buffer_offset_alignment())

    @property
    def required(self):
        return vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT

    def fastMalloc(self, size: int, *image_args, retain_device: bool = True):
        if image_args:
            return self._image(size, *image_args)
        size = int(size)
        if size <= 0:
            raise GpuError(f"VkWeightAllocator.fastMalloc: size must be positive, got {size}")
        self.vkdev.check_alive("VkWeightAllocator.fastMalloc")
        capacity = -(-size // 16) * 16
        with self._lock:
            offset = -(-self._cursor // self._align) * self._align
            if not self._blocks or offset + capacity > self._blocks[-1].size:
                raw = _RawBuffer(self.vkdev, max(self.block_size, capacity), self.required)
                self._blocks.append(raw)
                self._bytes_held += raw.size
                offset = 0
            block = self._blocks[-1]
            self._cursor = offset + capacity
            bm = VkBufferMemory(block.buffer, block.memory, offset, capacity, None)
            self._live.append(bm)
            self._bytes_in_use += capacity
        if retain_device:
            bm.retains = True
            self.vkdev.retain()
        return bm

    def fastFree(self, bm: VkBufferMemory) -> None:
        """Weights are never freed one by one; the block memory goes with clear()."""
        if isinstance(bm, VkImageMemory):
            bm.destroy()
            return
        if bm.dead or not bm.retains:
            return
        with self._lock:
            self._bytes_in_use -= bm.capacity
        self._drop_device_ref(bm)

    def clear(self) -> None:
        """Free every block; weight VkMats still around become dead (their release is a no-op)."""
        with self._lock:
            blocks, self._blocks = self._blocks, []
            live, self._live = self._live, []
            self._cursor = 0
            self._bytes_held = self._bytes_in_use = 0
        for raw in blocks:  # destroy first: dropping the last device reference may destroy the device
            raw.destroy()
        for bm in live:
            bm.dead = True
            self._drop_device_ref(bm)

    def free_all(self) -> None:
        self.clear()
