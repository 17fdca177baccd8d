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


# what a barrier inside a segment makes visible: every device stage and access its commands
# use. The host's reads get one barrier of their own at the segment's end (host_barrier):
# host visibility in every barrier would make each one pay for it.
DEVICE_STAGES = COMPUTE | TRANSFER
DEVICE_ACCESS = SHADER_READ | SHADER_WRITE | TRANSFER_READ | TRANSFER_WRITE


class BarrierTracker:
    """Per-segment state of every buffer the segment touched.

    A pipeline barrier waits for all earlier work of its source stages, whichever buffers
    that work touched, so each barrier emitted here is a global one: it orders every
    pending write and read before the command, and the state starts afresh. The commands
    after it then need no barrier of their own until one reads or overwrites what a later
    command wrote. That is what lets independent dispatches recorded back to back (the
    items of a batch, interleaved by VkCompute's lanes) run concurrently: one barrier
    per step of the batch, not one per item.
    """

    def __init__(self) -> None:
        self._states: dict[int, _State] = {}
        self.barriers = 0  # emitted in this recorder's life: tests read it

    def begin(self, cmdbuf) -> None:
        """Start of a segment: one global barrier after all earlier GPU work, fresh state."""
        self._states.clear()
        self._emit(cmdbuf, COMPUTE | TRANSFER, COMPUTE | TRANSFER, SHADER_WRITE | TRANSFER_WRITE,
                   SHADER_READ | SHADER_WRITE | TRANSFER_READ | TRANSFER_WRITE)

    def access(self, cmdbuf, accesses) -> None:
        """Record the barrier (if any) needed before one command's buffer accesses.

        accesses: iterable of (VkBufferMemory, stage, read access bits, write access bits).
        """
        merged: dict[int, list] = {}
        for bm, stage, read, write in accesses:
            entry = merged.get(bm.key)
            if entry is None:
                merged[bm.key] = [stage, read, write]
            else:  # the same buffer bound twice in one dispatch
                entry[0] |= stage
                entry[1] |= read
                entry[2] |= write
        if any(self._hazard(key, *entry) for key, entry in merged.items()):
            self._barrier(cmdbuf)
        for key, (stage, read, write) in merged.items():
            state = self._states.get(key)
            if state is None:
                state = self._states[key] = _State()
            if write:
                state.write_stage, state.write_access = stage, write
                state.read_stages = 0
                state.visible = set()
            else:
                state.read_stages |= stage
                state.visible.add((stage, read))

    def _hazard(self, key: int, stage: int, read: int, write: int) -> bool:
        state = self._states.get(key)
        if state is None:
            return False
        raw = bool(read and state.write_stage and (stage, read) not in state.visible)
        return raw or bool(write and (state.write_stage or state.read_stages))

    def _barrier(self, cmdbuf) -> None:
        """Wait for every pending write and read of the segment; make the writes visible."""
        src_stages = src_access = 0
        for state in self._states.values():
            src_stages |= state.write_stage | state.read_stages
            src_access |= state.write_access
        self._states.clear()
        self._emit(cmdbuf, src_stages, DEVICE_STAGES, src_access, DEVICE_ACCESS)

    def host_barrier(self, cmdbuf) -> None:
        """End of a segment whose results the host reads after the fence: every write of the
        segment made visible to the host (the states cannot say which: a barrier forgets them)."""
        self._emit(cmdbuf, DEVICE_STAGES, HOST, SHADER_WRITE | TRANSFER_WRITE, HOST_READ)

    def _emit(self, cmdbuf, src_stages: int, dst_stages: int, src_access: int, dst_access: int) -> None:
        self.barriers += 1
        ffi = vk.ffi
        barrier = ffi.new("VkMemoryBarrier*", {
            "sType": vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            "srcAccessMask": src_access, "dstAccessMask": dst_access})
        vk.lib.vkCmdPipelineBarrier(cmdbuf, src_stages, dst_stages, 0, 1, barrier, 0, ffi.NULL, 0, ffi.NULL)
