"""Hazard tracking for buffers inside one command buffer, turned into pipeline barriers.

Vulkan runs commands of a command buffer in any order the driver likes unless told
otherwise. For each buffer range we remember the last write (stage + access) and
which stages read it since, and before a new access we insert the barrier it needs:

    read after write    (RAW)  wait for the write and make it visible to the reader
    write after write   (WAW)  wait for the earlier write (and order the two)
    write after read    (WAR)  wait for the reads to finish (no memory to make visible)

A read that already got a barrier for the last write needs no second one: reads
after reads never conflict. Buffers an allocator hands out again after a release
keep their state (it is keyed by the VkBufferMemory), so reuse during recording is
ordered like any other write.

Every GPU segment starts with one global memory barrier instead of per-buffer state
carried over: it orders the segment after everything submitted before it (earlier
segments, the previous replay of this same plan, weight uploads of a VkTransfer),
whatever order they ran in. Downloads end the segment with a barrier to the host
stage so that the host sees the bytes after the fence.

The stage/access values are Vulkan's ABI constants, spelled out so that this module
needs no `vulkan` import to compute barriers.
"""

from __future__ import annotations

from .vk import vk

COMPUTE = 0x00000800       # VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
TRANSFER = 0x00001000      # VK_PIPELINE_STAGE_TRANSFER_BIT
HOST = 0x00004000          # VK_PIPELINE_STAGE_HOST_BIT
SHADER_READ = 0x00000020   # VK_ACCESS_SHADER_READ_BIT
SHADER_WRITE = 0x00000040  # VK_ACCESS_SHADER_WRITE_BIT
TRANSFER_READ = 0x00000800
TRANSFER_WRITE = 0x00001000
HOST_READ = 0x00002000
_QUEUE_FAMILY_IGNORED = 0xFFFFFFFF


class _State:
    __slots__ = ("read_stages", "visible", "write_access", "write_stage")

    def __init__(self) -> None:
        self.write_stage = 0
        self.write_access = 0
        self.read_stages = 0
        self.visible: set = set()  # (stage, access) pairs the last write was made visible to


class BarrierTracker:
    """Per-segment state of every buffer the segment touched."""

    def __init__(self) -> None:
        self._states: dict[int, _State] = {}

    def begin(self, cmdbuf) -> None:
        """Start of a segment: one global barrier after all earlier GPU work, fresh state."""
        self._states.clear()
        ffi = vk.ffi
        barrier = ffi.new("VkMemoryBarrier*", {
            "sType": vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            "srcAccessMask": SHADER_WRITE | TRANSFER_WRITE,
            "dstAccessMask": SHADER_READ | SHADER_WRITE | TRANSFER_READ | TRANSFER_WRITE})
        vk.lib.vkCmdPipelineBarrier(cmdbuf, COMPUTE | TRANSFER, COMPUTE | TRANSFER, 0,
                                    1, barrier, 0, ffi.NULL, 0, ffi.NULL)

    def access(self, cmdbuf, accesses) -> None:
        """Record the barrier (if any) needed before one command's buffer accesses.

        accesses: iterable of (VkBufferMemory, stage, read access bits, write access bits).
        One vkCmdPipelineBarrier covers them all.
        """
        merged: dict[int, list] = {}
        for bm, stage, read, write in accesses:
            entry = merged.get(bm.key)
            if entry is None:
                merged[bm.key] = [bm, stage, read, write]
            else:  # the same buffer bound twice in one dispatch
                entry[1] |= stage
                entry[2] |= read
                entry[3] |= write

        needed = []
        src_stages = dst_stages = 0
        for bm, stage, read, write in merged.values():
            state = self._states.get(bm.key)
            if state is None:
                state = self._states[bm.key] = _State()
            src_stage = src_access = 0
            raw = bool(read and state.write_stage and (stage, read) not in state.visible)
            if raw or (write and state.write_stage):
                src_stage |= state.write_stage
                src_access |= state.write_access
            if write and state.read_stages:
                src_stage |= state.read_stages  # WAR: an execution dependency is enough
            if src_stage:
                needed.append((bm, src_access, read | write))
                src_stages |= src_stage
                dst_stages |= stage
            if write:
                state.write_stage, state.write_access = stage, write
                state.read_stages = 0
                state.visible = set()
            else:
                state.read_stages |= stage
                if raw:
                    state.visible.add((stage, read))
        if needed:
            self._emit(cmdbuf, src_stages, dst_stages, needed)

    @staticmethod
    def _emit(cmdbuf, src_stages: int, dst_stages: int, needed) -> None:
        ffi = vk.ffi
        barriers = ffi.new("VkBufferMemoryBarrier[]", len(needed))
        for b, (bm, src_access, dst_access) in zip(barriers, needed):
            b.sType = vk.VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER
            b.srcAccessMask = src_access
            b.dstAccessMask = dst_access
            b.srcQueueFamilyIndex = _QUEUE_FAMILY_IGNORED
            b.dstQueueFamilyIndex = _QUEUE_FAMILY_IGNORED
            b.buffer = bm.buffer
            b.offset = bm.offset
            b.size = bm.capacity
        vk.lib.vkCmdPipelineBarrier(cmdbuf, src_stages, dst_stages, 0, 0, ffi.NULL,
                                    len(needed), barriers, 0, ffi.NULL)
