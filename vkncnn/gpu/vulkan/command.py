"""VkCompute: record GPU work once, run it, replay it every inference. VkTransfer: weight upload.

A recording is a list of STEPS, run in order:

  GPU segment   a command buffer, plus host pre-actions (fill upload staging buffers)
                and post-actions (read download staging buffers into numpy arrays);
  host step     a Python callable, e.g. a layer that has no shader and runs on numpy.

record_host() closes the current segment, so GPU work before a host step has finished
(and its downloads are readable) when the step runs, and work recorded after it
starts a new segment. submit_and_wait() runs the steps not run yet; replay() runs all
of them again. Inputs that change between inferences go in through a HostSlot: the
upload re-reads `slot.array` every time its segment runs, and raises ReplanNeeded if
the shape or dtype changed (the recorded shapes and buffer sizes would be wrong).

Per inference the Python cost is then one pre-action per input, one submit per
segment and one post-action per output: it does not grow with tensor size or layer
count. Host-side packing and fp16 casting are single vectorised numpy copies.

transfer_bytes() counts the bytes these copies move between host and device as they
run (a replay counts again): what crosses per inference can be measured, and tested.

Barriers: every buffer access goes through a BarrierTracker (barriers.py).
Descriptor sets are written at record time (descriptors.py). VkMats made here belong
to the caller; release() frees the command buffers, descriptor pools and staging.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from ...errors import GpuError
from ...memory_budget import check_alloc
from . import device_limits, lifetime
from .allocator import VkWeightAllocator
from .barriers import (
    COMPUTE,
    SHADER_READ,
    SHADER_WRITE,
    TRANSFER,
    TRANSFER_READ,
    TRANSFER_WRITE,
    BarrierTracker,
)
from .descriptors import DescriptorArena
from .device import FenceTimeout, fence_timeout_s
from .packing import axis_and_inner
from .pipeline import flat_grid, shader_pipeline, workgroup_cap
from .vk import check, vk
from .vkmat import VkMat, pack_into, storage_dtype, unpack

# per-inference fp32 inputs of at least this many values are uploaded as fp32 and cast to fp16
# on the GPU (VkCompute._upload_cast_on_device); smaller ones are cast on the host: a few
# microseconds there, where the cast dispatch would cost a barrier inside the plan
UPLOAD_CAST_MIN = 4096
# fp16 blobs of at least this many values are cast to fp32 on the GPU before a download
# (VkCompute._cast_for_download); smaller ones on the host, where it costs less than a dispatch
DOWNLOAD_CAST_MIN = 4096


class _TransferCounter:
    """Bytes copied host -> device and device -> host since the process started, counted when
    the copies run (a staging buffer filled, a download read back), not when recorded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.uploaded = 0
        self.downloaded = 0

    def add(self, uploaded: int = 0, downloaded: int = 0) -> None:
        with self._lock:
            self.uploaded += uploaded
            self.downloaded += downloaded


_transfers = _TransferCounter()


def transfer_bytes() -> tuple[int, int]:
    """(bytes uploaded, bytes downloaded) between host and device so far, all devices together.

    Take it before and after a run: the differences are what the run moved. Writes the host
    makes straight into mapped device memory (count_upload) are included.
    """
    with _transfers._lock:
        return _transfers.uploaded, _transfers.downloaded


def count_upload(nbytes: int) -> None:
    """Count bytes the host wrote into mapped memory that a shader reads (no staging copy)."""
    _transfers.add(uploaded=int(nbytes))


class HostSlot:
    """A host array an upload reads when its step runs, not when it is recorded."""

    __slots__ = ("array",)

    def __init__(self, array=None) -> None:
        self.array = array

    def __repr__(self) -> str:
        a = self.array
        return f"<HostSlot {None if a is None else (a.shape, str(a.dtype))}>"


class LanesUnsupported(GpuError):
    """Something that must run in order (a host step, a submit, a timestamp) was recorded
    while lanes were open: the caller records the items one by one instead."""


class ReplanNeeded(Exception):
    """A HostSlot no longer matches the recording (shape/dtype): record the plan again."""


class Download:
    """The host copy of a VkMat; `.array` is filled (fp32, unpacked numpy shape) each time it runs."""

    __slots__ = ("array", "shape")

    def __init__(self, shape: tuple) -> None:
        self.array = None
        self.shape = shape

    def __repr__(self) -> str:
        return f"<Download shape={self.shape} {'ready' if self.array is not None else 'pending'}>"


class _GpuSegment:
    __slots__ = ("cmdbuf", "commands", "host_reads", "post", "pre")

    def __init__(self, cmdbuf) -> None:
        self.cmdbuf = cmdbuf
        self.pre: list = []
        self.post: list = []
        self.host_reads: list = []
        self.commands = 0


class _HostStep:
    __slots__ = ("fn",)

    def __init__(self, fn) -> None:
        self.fn = fn


class VkCompute:
    """The recorder (ncnn's VkCompute), with steps so that it can replay."""

    # may kernels recorded here use cooperative matrices (tensor cores)? The planner sets
    # the net's opt.use_cooperative_matrix; ncnn's scripts turn it off to compare kernels.
    use_cooperative_matrix = True

    def __init__(self, vkdev) -> None:
        vkdev.check_alive(type(self).__name__)
        ffi, lib = vk.ffi, vk.lib
        self.vkdev = vkdev
        self._released = False
        # One command pool per recorder: pools must not be used from two threads at once.
        pool_info = ffi.new("VkCommandPoolCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
            "queueFamilyIndex": vkdev.queue_family_index})
        pool = ffi.new("VkCommandPool*")
        check(lib.vkCreateCommandPool(vkdev.handle, pool_info, ffi.NULL, pool), "vkCreateCommandPool")
        self._pool = pool[0]
        fence_info = ffi.new("VkFenceCreateInfo*", {"sType": vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO})
        fence = ffi.new("VkFence*")
        check(lib.vkCreateFence(vkdev.handle, fence_info, ffi.NULL, fence), "vkCreateFence")
        self._fence = fence[0]
        self._executing = False
        self.abandoned = False  # release() found its work still running: buffers it used must stay
        self._steps: list = []
        self._segment: _GpuSegment | None = None
        self._next = 0                       # first step not run yet
        self._lanes: list | None = None      # between begin_lanes and end_lanes: commands per lane
        self._lane = 0
        self._tracker = BarrierTracker()
        self._descriptors = DescriptorArena(vkdev)
        self._own_blob = self._own_staging = None
        self._staging: list = []             # (allocator, VkBufferMemory) freed at release
        self._scratch: list = []             # VkMats bound to unused writable slots
        self._pinned: dict = {}              # bm.key -> bm used by recorded commands
        self._allocators_used: dict = {}     # id -> allocator: kept alive while commands use them
        self.dispatch_count = 0
        # profiling by dispatch (vkncnn bench --profile dispatches): called with each
        # recorded pipeline's name after its dispatch, to write a timestamp
        self.after_dispatch = None
        vkdev.retain()

    # -- allocators -------------------------------------------------------------------------
    def blob_allocator(self, opt=None):
        """opt.blob_vkallocator, or one borrowed from the device for this recorder's life."""
        allocator = getattr(opt, "blob_vkallocator", None) if opt is not None else None
        if allocator is None:
            if self._own_blob is None:
                self._own_blob = self.vkdev.acquire_blob_allocator()
            allocator = self._own_blob
        return allocator

    def staging_allocator(self, opt=None):
        allocator = getattr(opt, "staging_vkallocator", None) if opt is not None else None
        if allocator is None:
            if self._own_staging is None:
                self._own_staging = self.vkdev.acquire_staging_allocator()
            allocator = self._own_staging
        return allocator

    def _new_staging(self, nbytes: int, opt):
        allocator = self.staging_allocator(opt)
        bm = allocator.fastMalloc(nbytes)
        self._staging.append((allocator, bm))
        return bm

    def _use(self, mat_or_bm, allocator=None):
        """Pin a buffer used by a recorded command (and keep its allocator alive)."""
        bm = mat_or_bm.data if isinstance(mat_or_bm, VkMat) else mat_or_bm
        if bm.key not in self._pinned:
            self._pinned[bm.key] = bm
            bm.pins += 1
        allocator = allocator if allocator is not None else getattr(mat_or_bm, "allocator", None)
        if allocator is not None:
            self._allocators_used[id(allocator)] = allocator
        return bm

    # -- segments ---------------------------------------------------------------------------
    def _open_segment(self) -> _GpuSegment:
        if self._released:
            raise GpuError("VkCompute used after release()")
        if self._segment is None:
            ffi, lib = vk.ffi, vk.lib
            info = ffi.new("VkCommandBufferAllocateInfo*", {
                "sType": vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, "commandPool": self._pool,
                "level": vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, "commandBufferCount": 1})
            out = ffi.new("VkCommandBuffer*")
            check(lib.vkAllocateCommandBuffers(self.vkdev.handle, info, out), "vkAllocateCommandBuffers")
            # no ONE_TIME_SUBMIT flag: replay() submits the same command buffer again
            begin = ffi.new("VkCommandBufferBeginInfo*", {"sType": vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO})
            check(lib.vkBeginCommandBuffer(out[0], begin), "vkBeginCommandBuffer")
            self._tracker.begin(out[0])
            self._segment = _GpuSegment(out[0])
            self._steps.append(self._segment)
        return self._segment

    def _close_segment(self) -> None:
        seg, self._segment = self._segment, None
        if seg is None:
            return
        if seg.host_reads:  # make the download copies visible to the host after the fence
            self._tracker.host_barrier(seg.cmdbuf)
        check(vk.lib.vkEndCommandBuffer(seg.cmdbuf), "vkEndCommandBuffer")

    # -- lanes ------------------------------------------------------------------------------
    def begin_lanes(self, count: int) -> None:
        """Record `count` independent command streams (the items of a batch), each from
        lane(i) on, to be interleaved by end_lanes.

        Recorded one after another, item b's first command would wait (a barrier) for item
        b-1's last. Interleaved, step k of every lane follows step k-1 of every lane: one
        barrier per step (barriers.py), and the steps of all items run concurrently. The
        lanes must touch disjoint buffers (each item its own blob allocator) except for
        what all of them only read (weights). Host steps cannot be part of a lane.
        """
        if self._lanes is not None:
            raise GpuError("begin_lanes: lanes are open already")
        self._lanes = [[] for _ in range(count)]
        self._lane = 0

    def lane(self, index: int) -> None:
        self._lane = index

    def end_lanes(self) -> None:
        """Write the lanes' commands into the current segment, step by step across lanes."""
        lanes, self._lanes = self._lanes, None
        if not lanes or not any(lanes):
            return
        seg = self._open_segment()
        for step in range(max(len(lane) for lane in lanes)):
            for lane in lanes:
                if step < len(lane):
                    accesses, write = lane[step]
                    self._tracker.access(seg.cmdbuf, accesses)
                    write(seg.cmdbuf)
                    seg.commands += 1

    def _check_not_in_lanes(self, what: str) -> None:
        if self._lanes is not None:
            raise LanesUnsupported(f"{what} cannot be part of a lane")

    @property
    def barriers(self) -> int:
        """Pipeline barriers recorded so far (tests and the bench read it)."""
        return self._tracker.barriers

    @property
    def steps(self) -> int:
        return len(self._steps)

    # -- recording --------------------------------------------------------------------------
    def _command(self, accesses: list, write) -> None:
        """One command: the buffers it accesses, and write(cmdbuf) putting it into a command
        buffer. Between begin_lanes and end_lanes it waits in the current lane."""
        seg = self._open_segment()
        if self._lanes is not None:
            self._lanes[self._lane].append((accesses, write))
            return
        self._tracker.access(seg.cmdbuf, accesses)
        write(seg.cmdbuf)
        seg.commands += 1

    def _record_copy(self, src_bm, dst_bm, nbytes: int) -> None:
        region = vk.ffi.new("VkBufferCopy*", {"srcOffset": src_bm.offset, "dstOffset": dst_bm.offset, "size": nbytes})
        self._command([(src_bm, TRANSFER, TRANSFER_READ, 0), (dst_bm, TRANSFER, 0, TRANSFER_WRITE)],
                      lambda cmdbuf: vk.lib.vkCmdCopyBuffer(cmdbuf, src_bm.buffer, dst_bm.buffer, 1, region))

    def _upload(self, src, opt, elempack: int, allocator) -> VkMat:
        if elempack not in (1, 4):
            raise GpuError(f"record_upload: elempack must be 1 or 4, got {elempack}")
        slot = src if isinstance(src, HostSlot) else None
        if slot is not None and slot.array is None:
            raise GpuError("record_upload: the HostSlot is empty at record time (its shape is needed)")
        array = np.asarray(slot.array if slot is not None else src)
        dtype = storage_dtype(array.dtype, opt, self.vkdev)
        if slot is not None and dtype == np.float16 and array.dtype == np.float32 and array.size >= UPLOAD_CAST_MIN:
            return self._upload_cast_on_device(slot, opt, elempack, allocator)
        dst = VkMat.for_numpy_shape(array.shape, elempack, dtype.itemsize, allocator)
        if dst.empty():
            return dst
        self._record_staged_copy(dst, array, slot, dtype, opt)
        return dst

    def _record_staged_copy(self, dst: VkMat, array: np.ndarray, slot, dtype, opt) -> None:
        """Fill a staging buffer from `array` (now) or `slot` (each run) and copy it into dst."""
        nbytes = dst.nbytes()
        elempack = dst.elempack
        staging = self._new_staging(nbytes, opt)
        view = staging.mapped[:nbytes].view(dtype).reshape(dst.packed_shape())
        if slot is None:
            pack_into(view, array, elempack)  # constant data: packed once, now
            _transfers.add(uploaded=nbytes)
        else:
            shape, host_dtype = array.shape, array.dtype

            def refill() -> None:
                a = slot.array
                if a is None or a.shape != shape or a.dtype != host_dtype:
                    got = None if a is None else f"{a.shape} {a.dtype}"
                    raise ReplanNeeded(f"input changed from {shape} {host_dtype} to {got}")
                pack_into(view, a, elempack)
                _transfers.add(uploaded=nbytes)
            self._open_segment().pre.append(refill)
        self._use(staging)
        self._use(dst)
        self._record_copy(staging, dst.data, nbytes)

    def _upload_cast_on_device(self, slot, opt, elempack: int, allocator) -> VkMat:
        """Per-inference fp32 input to fp16 storage: upload fp32, cast in a shader.

        numpy's float32->float16 cast is slow for an input image; the GPU does it in a small
        fraction of the time (figures: docs/perf-notes.md, "fp16 inputs cast on the GPU").
        Constant data (weights) is still cast once on the host.
        """
        staged = SimpleNamespace(use_fp16_storage=False, blob_vkallocator=allocator,
                                 staging_vkallocator=getattr(opt, "staging_vkallocator", None))
        fp32 = self._upload(slot, staged, elempack, allocator)
        if fp32.empty():  # nothing to cast, but stored as fp16 like every other blob of the plan
            return VkMat.for_numpy_shape(np.asarray(slot.array).shape, elempack, 2, allocator)
        dst = VkMat.create(fp32.w, fp32.h, fp32.d, fp32.c, fp32.dims, 2 * elempack, elempack, allocator)
        n = fp32.total() * elempack
        pipeline = shader_pipeline(self.vkdev, "upload_cast", True, local_size=(workgroup_cap(self.vkdev), 1, 1))
        self.record_pipeline(pipeline, [fp32, dst], [n], flat_grid(n))
        fp32.release()  # the recorder keeps the buffer pinned while its commands use it
        return dst

    def record_upload(self, src, opt, elempack: int = 1) -> VkMat:
        """Upload an ndarray (now) or a HostSlot (each run) into a new blob VkMat.

        Floats are stored as fp16 when opt.use_fp16_storage and the device supports it;
        packing to elempack 4 happens on the host, along numpy axis 0.
        """
        return self._upload(src, opt, elempack, self.blob_allocator(opt))

    def record_write(self, dst: VkMat, src, opt=None, dtype=None) -> None:
        """Copy an ndarray (now) or a HostSlot (each time its step runs) into the existing `dst`.

        record_upload makes a new blob; this fills one that outlives the recording (the
        shader harness's persistent buffers), so a replay sees what was written last. The
        array has dst's unpacked numpy shape; it is packed to dst's elempack and cast to
        `dtype` (default: dst's float type) on the host, in one vectorised copy.
        """
        slot = src if isinstance(src, HostSlot) else None
        if slot is not None and slot.array is None:
            raise GpuError("record_write: the HostSlot is empty at record time (its shape is needed)")
        array = np.asarray(slot.array if slot is not None else src)
        stored = np.dtype(dtype) if dtype is not None else dst.scalar_dtype()
        if stored.itemsize != dst.scalar_size():
            raise GpuError(f"record_write: {stored} scalars do not fit a VkMat of {dst.scalar_size()}-byte scalars")
        if array.shape != dst.numpy_shape():
            raise GpuError(f"record_write: a {array.shape} array does not fill a {dst.numpy_shape()} VkMat")
        if dst.empty():
            return
        self._record_staged_copy(dst, array, slot, stored, opt)

    def record_download(self, src: VkMat, opt=None, dtype=None, what: str = "the host copy of a device blob"
                        ) -> Download:
        """Copy `src` to the host after its step runs: Download.array, fp32, unpacked numpy shape.

        dtype: the scalar type stored on the device when it is not a float of src.elemsize
        (e.g. int32); non-float data comes back in that type. what: the copy, as a budget
        error names it.
        """
        download = Download(src.numpy_shape())
        if opt is not None:
            # the host copy is fp32 where the device holds fp16: twice the bytes the device
            # buffer was held to, so it answers to the budget on its own
            itemsize = 4 if dtype is None or np.dtype(dtype).kind == "f" else np.dtype(dtype).itemsize
            check_alloc(opt, src.numpy_shape(), itemsize, what)
        if src.empty():
            kind_float = dtype is None or np.dtype(dtype).kind == "f"
            download.array = np.zeros(src.numpy_shape(), np.float32 if kind_float else dtype)
            return download
        cast = dtype is None and src.scalar_size() == 2 and src.total() * src.elempack >= DOWNLOAD_CAST_MIN
        if cast:
            src = self._cast_for_download(src, opt)
        nbytes = src.nbytes()
        staging = self._new_staging(nbytes, opt)
        self._use(staging)
        self._record_copy(self._use(src), staging, nbytes)
        seg = self._segment
        seg.host_reads.append(staging)
        stored = np.dtype(dtype) if dtype is not None else src.scalar_dtype()
        view = staging.mapped[:nbytes].view(stored).reshape(src.packed_shape())
        elempack, n = src.elempack, src.numpy_shape()[0]
        out_dtype = np.float32 if view.dtype.kind == "f" else view.dtype

        def read_back() -> None:
            download.array = unpack(view, elempack, n, out_dtype)
            _transfers.add(downloaded=nbytes)
        seg.post.append(read_back)
        if cast:
            src.release()  # the recorder keeps the buffer pinned while its commands use it
        return download

    def _cast_for_download(self, src: VkMat, opt) -> VkMat:
        """fp16 `src` as a new fp32, unpacked VkMat (shaders/download_cast.comp), for blobs
        of at least DOWNLOAD_CAST_MIN values: numpy's float16 -> float32 cast of a packed
        blob costs time in proportion to its values, the GPU's about one dispatch whatever
        the size, so on large blobs (a detection head) the GPU wins by far (figures:
        docs/perf-notes.md, "fp16 downloads cast on the GPU")."""
        items, inner = axis_and_inner(src)
        n = items * src.elempack
        fields = {1: (n, 1, 1, 1), 2: (src.w, n, 1, 1), 3: (src.w, src.h, 1, n), 4: (src.w, src.h, src.d, n)}
        dst = VkMat.create(*fields[src.dims], dims=src.dims, elemsize=4, elempack=1, allocator=self.blob_allocator(opt))
        pipeline = shader_pipeline(self.vkdev, "download_cast", True, local_size=(workgroup_cap(self.vkdev), 1, 1))
        self.record_pipeline(pipeline, [src, dst], [n * inner, inner, src.elempack], flat_grid(n * inner))
        return dst

    def record_clone(self, src: VkMat, opt=None) -> VkMat:
        """A new blob VkMat with the same contents."""
        if src.empty():
            return VkMat(src.w, src.h, src.d, src.c, src.dims, src.elemsize, src.elempack)
        dst = VkMat.create_like(src, self.blob_allocator(opt))
        self._record_copy(self._use(src), self._use(dst), src.nbytes())
        return dst

    def record_fill(self, dst: VkMat, word: int = 0, rows: tuple[int, int] | None = None) -> None:
        """Set dst's bytes to copies of the 32-bit `word` (0: zeros in every scalar type).

        rows=(first, stop): only those rows (along h) of every channel of a pack1 tensor. Vulkan
        fills whole 4-byte words: each channel's byte range is rounded out to them, so with
        2-byte scalars and an odd row width one more scalar on either side may be set too.
        """
        if dst.empty():
            return
        bm = self._use(dst)
        if rows is None:
            spans = [(0, dst.nbytes())]
        else:
            row = dst.w * dst.elemsize
            first, stop = max(0, rows[0]), min(dst.h, rows[1])
            spans = [(q * dst.cstep * dst.elemsize + first * row, (stop - first) * row)
                     for q in range(dst.c)] if stop > first else []
        if not spans:
            return
        # whole 4-byte words (the size class holds the tail)
        words = [(start // 4 * 4, min(-(-(start + size) // 4) * 4, bm.capacity)) for start, size in spans]

        def write(cmdbuf) -> None:
            for lo, hi in words:
                vk.lib.vkCmdFillBuffer(cmdbuf, bm.buffer, bm.offset + lo, hi - lo, word & 0xFFFFFFFF)
        self._command([(bm, TRANSFER, 0, TRANSFER_WRITE)], write)

    def record_copy_channels(self, src: VkMat, dst: VkMat) -> None:
        """Copy each channel of `src` to the start of the same channel of `dst`, whose channels
        may be longer (a (c, h, w) tensor grown along h): one region per channel, no shader."""
        if src.empty():
            return
        if (src.elempack, src.elemsize, src.c) != (dst.elempack, dst.elemsize, dst.c) or src.cstep > dst.cstep:
            raise GpuError(f"record_copy_channels: {src!r} does not fit the channels of {dst!r}")
        sbm, dbm = self._use(src), self._use(dst)
        n, es = src.c, src.elemsize
        regions = vk.ffi.new("VkBufferCopy[]", n)
        for q, region in enumerate(regions):
            region.srcOffset = sbm.offset + q * src.cstep * es
            region.dstOffset = dbm.offset + q * dst.cstep * es
            region.size = src.cstep * es
        self._command([(sbm, TRANSFER, TRANSFER_READ, 0), (dbm, TRANSFER, 0, TRANSFER_WRITE)],
                      lambda cmdbuf: vk.lib.vkCmdCopyBuffer(cmdbuf, sbm.buffer, dbm.buffer, n, regions))

    def record_pipeline(self, pipeline, bindings: list, constants: list, dispatcher) -> None:
        """Dispatch `pipeline` over `dispatcher` (a VkMat: (w, h*d, c), or global sizes (x, y, z))."""
        info = pipeline.shader_info
        if info is None:
            raise GpuError(f"record_pipeline: pipeline '{pipeline.name}' was not created")
        if len(bindings) != info.binding_count:
            raise GpuError(f"shader '{pipeline.name}' has {info.binding_count} bindings, "
                           f"record_pipeline got {len(bindings)}")
        if self._released:
            raise GpuError("VkCompute used after release()")
        push = pipeline.encode_push_constants(constants)
        groups = self._groups(pipeline, dispatcher)
        if 0 in groups:
            return  # an empty tensor: nothing to compute
        dummy = None
        limit = self.vkdev.info.max_storage_buffer_range()
        buffers, accesses = [], []
        for mat, role in zip(bindings, info.bindings):
            if mat is None or mat.empty():
                # An unused slot (a bias it has none of, a split-K workspace with one
                # slice): the shader does not touch it, but Vulkan wants a buffer there.
                # Read-only slots share the device's dummy, never written, so never a
                # hazard. A writable slot gets a scratch buffer of its own: one shared
                # dummy "written" by every such dispatch would order them all one after
                # another (and sync validation rightly calls that a hazard).
                if not role.writes:
                    dummy = dummy or self.vkdev.dummy_buffer()
                    buffers.append((dummy.buffer, dummy.offset, min(dummy.capacity, limit)))
                    continue
                mat = VkMat.create(4, dims=1, elemsize=4, allocator=self.blob_allocator())
                self._scratch.append(mat)
            bm = self._use(mat)
            device_limits.check_binding(self.vkdev.info, pipeline.name, mat.nbytes(), bm.offset)
            buffers.append((bm.buffer, bm.offset, min(bm.capacity, limit)))
            accesses.append((bm, COMPUTE, SHADER_READ if role.reads else 0, SHADER_WRITE if role.writes else 0))
        dset = self._descriptors.write_set(pipeline.descriptor_set_layout, buffers,
                                           [role.storage for role in info.bindings])
        ffi, lib = vk.ffi, vk.lib
        layout = pipeline.pipeline_layout
        sets = ffi.new("VkDescriptorSet[]", [dset]) if buffers else None
        data = ffi.new("char[]", push) if push else None

        def write(cmdbuf) -> None:
            lib.vkCmdBindPipeline(cmdbuf, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline)
            if sets is not None:
                lib.vkCmdBindDescriptorSets(cmdbuf, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, sets, 0, ffi.NULL)
            if data is not None:
                lib.vkCmdPushConstants(cmdbuf, layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(push), data)
            lib.vkCmdDispatch(cmdbuf, *groups)
        self._command(accesses, write)
        self.dispatch_count += 1
        if self.after_dispatch is not None:
            self.after_dispatch(pipeline.name)

    def _groups(self, pipeline, dispatcher) -> tuple:
        if isinstance(dispatcher, VkMat):
            size = (dispatcher.w, dispatcher.h * dispatcher.d, dispatcher.c)
        else:
            size = tuple(int(s) for s in dispatcher) + (1,) * (3 - len(dispatcher))
            if len(size) != 3:
                raise GpuError(f"dispatcher must be a VkMat or up to 3 global sizes, got {dispatcher!r}")
        groups = tuple(-(-max(s, 0) // ls) for s, ls in zip(size, pipeline.local_size))
        device_limits.check_dispatch(self.vkdev.info, pipeline.name, groups, size)
        return groups

    def record_timestamp(self, query_pool, index: int, reset_count: int = 0) -> None:
        """Write a GPU timestamp once every command recorded so far has finished.

        With reset_count > 0 the queries [index, index + reset_count) are reset first (a
        recorded reset runs again on every replay, so the timings are fresh each time).
        """
        self._check_not_in_lanes("a timestamp")
        seg = self._open_segment()
        lib = vk.lib
        if reset_count:
            lib.vkCmdResetQueryPool(seg.cmdbuf, query_pool, index, reset_count)
        lib.vkCmdWriteTimestamp(seg.cmdbuf, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool, index)
        seg.commands += 1

    def record_host(self, fn) -> None:
        """End the current GPU segment and append a host step: fn() runs after it, in order."""
        if not callable(fn):
            raise GpuError(f"record_host needs a callable, got {type(fn).__name__}")
        if self._released:
            raise GpuError("VkCompute used after release()")
        self._check_not_in_lanes("a host step")
        self._close_segment()
        self._steps.append(_HostStep(fn))

    # -- running ----------------------------------------------------------------------------
    def _run(self, step) -> None:
        if isinstance(step, _HostStep):
            step.fn()
            return
        for action in step.pre:
            action()
        if step.commands:
            try:
                self.vkdev.submit_and_wait([step.cmdbuf], self._fence)
            except FenceTimeout:
                self._executing = True  # release() must not free what the GPU may still run
                raise
        for action in step.post:
            action()

    def submit_and_wait(self) -> int:
        """Run every step recorded since the last call, in order; returns 0 as ncnn does."""
        if self._released:
            raise GpuError("VkCompute used after release()")
        self._check_not_in_lanes("submit_and_wait")
        self._close_segment()
        while self._next < len(self._steps):
            self._run(self._steps[self._next])
            self._next += 1
        return 0

    def replay(self) -> int:
        """Run ALL steps again from the start (the uploads re-read their HostSlots)."""
        if self._released:
            raise GpuError("VkCompute used after release()")
        self._close_segment()
        self._next = 0
        return self.submit_and_wait()

    def single_segment(self):
        """The one GPU segment this recording is (None: it has host steps, several segments
        or nothing): what replay_together can submit with others."""
        self._close_segment()
        steps = self._steps
        return steps[0] if len(steps) == 1 and isinstance(steps[0], _GpuSegment) and steps[0].commands else None

    def before_submit(self, segment) -> None:
        """replay_together: run the segment's host pre-actions (its uploads) for a replay."""
        self._next = 0
        for action in segment.pre:
            action()

    def after_submit(self, segment) -> None:
        """replay_together: the GPU has run the segment; its host post-actions (downloads)."""
        for action in segment.post:
            action()
        self._next = 1

    def submit_timed_out(self) -> None:
        """replay_together: a submission holding this recording timed out (it may still run)."""
        self._executing = True

    @property
    def fence(self):
        return self._fence

    @property
    def released(self) -> bool:
        return self._released

    # -- teardown ---------------------------------------------------------------------------
    def release(self) -> None:
        """Free command buffers, descriptor pools and staging; VkMats made here stay the caller's."""
        if self._released:
            return
        self._released = True
        ffi, lib = vk.ffi, vk.lib
        dev = self.vkdev.handle
        if self._executing and not self._finished_after_timeout():
            self.abandoned = True  # still running after a timeout: leaking is safe, freeing is not
            lifetime.keep_forever(self)  # its staging and descriptor memory with it
            return
        self._segment = None
        self._steps.clear()
        lib.vkDestroyCommandPool(dev, self._pool, ffi.NULL)  # frees its command buffers
        lib.vkDestroyFence(dev, self._fence, ffi.NULL)
        self._descriptors.destroy()
        self._free_staging()
        for bm in self._pinned.values():
            bm.pins -= 1
        self._pinned.clear()
        for mat in self._scratch:
            mat.release()
        self._scratch.clear()
        self._allocators_used.clear()
        if self._own_blob is not None:
            self.vkdev.reclaim_blob_allocator(self._own_blob)
            self._own_blob = None
        if self._own_staging is not None:
            self.vkdev.reclaim_staging_allocator(self._own_staging)
            self._own_staging = None
        self.vkdev.release_ref()

    def _free_staging(self) -> None:
        for allocator, bm in self._staging:
            if self._pinned.pop(bm.key, None) is not None:
                bm.pins -= 1
            allocator.fastFree(bm)
        self._staging.clear()

    def _finished_after_timeout(self) -> bool:
        """Wait once more, bounded, for work whose submit timed out."""
        fences = vk.ffi.new("VkFence[]", [self._fence])
        result = vk.lib.vkWaitForFences(self.vkdev.handle, 1, fences, 1, int(fence_timeout_s() * 1e9))
        return result == vk.VK_SUCCESS

    def __del__(self) -> None:
        if not getattr(self, "_released", True):
            try:  # queued, not run: no locks in a finalizer (lifetime.py)
                lifetime.defer(self.release)
            except Exception:  # modules already torn down at interpreter exit
                pass


class VkTransfer(VkCompute):
    """Weight upload at load time (ncnn's VkTransfer): record uploads, submit once.

    The destination is `allocator`, else opt.blob_vkallocator (the Net passes its weight
    allocator there), else a VkWeightAllocator of this transfer. Staging memory is given
    back after each submit, and a submit happens by itself every 256 MB of pending data
    so that loading a big model never holds two copies of all its weights.
    """

    PENDING_LIMIT = 256 << 20

    def __init__(self, vkdev) -> None:
        super().__init__(vkdev)
        self._weight_allocator = None
        self._pending = 0

    def record_upload(self, array, opt=None, elempack: int = 1, allocator=None) -> VkMat:
        if allocator is None:
            allocator = getattr(opt, "blob_vkallocator", None) if opt is not None else None
        if allocator is None:
            if self._weight_allocator is None:
                self._weight_allocator = VkWeightAllocator(self.vkdev)
            allocator = self._weight_allocator
        mat = self._upload(array, opt, elempack, allocator)
        self._pending += mat.nbytes()
        if self._pending >= self.PENDING_LIMIT:
            self.submit_and_wait()
        return mat

    def submit_and_wait(self) -> int:
        super().submit_and_wait()
        # One-shot: nothing will replay, so the command buffers and staging can go now.
        self._free_staging()
        if not self._released:
            check(vk.lib.vkResetCommandPool(self.vkdev.handle, self._pool, 0), "vkResetCommandPool")
            self._steps.clear()
            self._next = 0
        self._pending = 0
        return 0


def replay_together(cmds: list[VkCompute]) -> None:
    """Replay recordings one after another as one queue submission: one wait for all of them.

    Each segment opens with a global barrier after everything submitted before it
    (barriers.py), so a later recording reads what an earlier one wrote, as if each were
    replayed alone. Recordings of more than one GPU segment (host steps between), or on
    different devices, replay in turn instead."""
    segments = [cmd.single_segment() for cmd in cmds]
    one_queue = all(cmd.vkdev is cmds[0].vkdev for cmd in cmds)
    if not one_queue or any(seg is None for seg in segments) or any(cmd.released for cmd in cmds):
        for cmd in cmds:
            cmd.replay()
        return
    for cmd, seg in zip(cmds, segments):
        cmd.before_submit(seg)
    try:
        cmds[-1].vkdev.submit_and_wait([seg.cmdbuf for seg in segments], cmds[-1].fence)
    except FenceTimeout:
        for cmd in cmds:
            cmd.submit_timed_out()  # release() must not free what the GPU may still run
        raise
    for cmd, seg in zip(cmds, segments):
        cmd.after_submit(seg)
