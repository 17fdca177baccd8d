"""Chained dispatch levels: dependent dispatches ordered by counters instead of barriers.

A pipeline barrier between two dispatches makes the second wait until the first has
drained, then start cold: on an H100 each such level of a decode step costs ~2.3 us before
any work, and a step is a chain of ~120 of them (docs/perf-notes.md). Kernels that support
it (shaders/include/level_chain.comp) are recorded without that barrier: every workgroup
adds itself to its level's counter when done, and the next level's workgroups, started
while the last one still runs, issue the loads that do not depend on it (their weights),
then wait until the counter holds every workgroup of the level before.

The recorder keeps, per segment, which level each command falls in. A command that needs a
barrier (barriers.py) gets a counter wait instead where it is a chained dispatch and every
command of the level before was one too; anything else gets the barrier as before, and so
does any other command recorded in a level that began with a wait (it would not wait).
Since every chained workgroup waits for the whole level before it, and that level waited
for the one before it, a level that starts computing has everything recorded before it
done: the ordering of a barrier, without the drain.

Only where the device starts the workgroups of one queue's dispatches in the order they
were recorded (NVIDIA's), so that waiting workgroups never keep the ones they wait for from
starting. A wait that runs far too long gives up and raises a flag that the recorder checks
after the fence (GpuError). VKNCNN_CHAIN_LEVELS=0 turns chains off, =1 on for any device.
"""

from __future__ import annotations

import os
import struct

from ...errors import GpuError
from .instance import validation_requested
from .vk import vk
from .vkmat import VkMat

NVIDIA = 0x10DE
# counters of one segment: counter 0 is the flag of a wait that gave up, levels count from 1;
# past the last, levels take barriers again (a decode step of a 0.5-2B decoder has 120-300)
MAX_LEVELS = 1024
# None: by device (NVIDIA); 0 or 1: off or on everywhere (the tests, decode_ab)
CHAIN_LEVELS: int | None = None
# uints from one level's counter to the next: each in a cache line of its own
CHAIN_STRIDE = 32
# turns of idle arithmetic between two reads of the counter a workgroup waits on
CHAIN_BACKOFF = 64
# the push constants a chained kernel declares first (level_chain.comp), filled in by add()
CHAIN_PUSH_WORDS = [0, 0, 0, 0]
# innerproduct_gemv.comp's CHAIN_MAX_STEPS: the weight loads an invocation holds while it waits
GEMV_CHAIN_MAX_STEPS = 16


def counts_bytes() -> int:
    """The size of a recorder's counters."""
    return MAX_LEVELS * CHAIN_STRIDE * 4


def chains_on(vkdev) -> bool:
    """Does a recorder on this device chain levels? Not by default under validation: the
    synchronization validation sees no barrier between the levels, and calls it a hazard."""
    setting = os.environ.get("VKNCNN_CHAIN_LEVELS", "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    if CHAIN_LEVELS is not None:
        return bool(CHAIN_LEVELS)
    return vkdev.info.vendor_id() == NVIDIA and not validation_requested()


class LevelChain:
    """Where one recorder's segment stands: its counters, the current level, who is in it."""

    def __init__(self, blob_allocator) -> None:
        self.counts = VkMat.create(counts_bytes() // 4, dims=1, elemsize=4, allocator=blob_allocator)
        self.started = False      # the counters are zeroed in the current segment
        self.level = 0            # the current level's counter
        self.groups = 0           # workgroups of the current level's chained dispatches
        self.previous_groups = 0  # ... and of the level before, which this one waits for
        self.all_chained = True   # every command of the current level is a chained dispatch
        self.waits = False        # the current level began with a wait, not a barrier
        self.waited_once = False  # some level of this segment began with a wait

    def start_segment(self) -> None:
        self.started = False
        self.waited_once = False

    def begin(self) -> None:
        """The counters were just zeroed, behind a barrier: level 1 starts."""
        self.started = True
        self.level, self.groups, self.all_chained, self.waits = 1, 0, True, False

    def can_wait(self) -> bool:
        """May the next level begin with a wait instead of a barrier?"""
        return self.all_chained and self.groups > 0 and self.level + 1 < MAX_LEVELS

    def next_level(self, waits: bool) -> None:
        self.level = min(self.level + 1, MAX_LEVELS - 1)
        self.previous_groups, self.groups = self.groups, 0
        self.all_chained, self.waits = True, waits
        self.waited_once = self.waited_once or waits

    def add(self, groups: int, push) -> None:
        """A chained dispatch of `groups` workgroups joins the current level: its push
        constants (wait level, wait count, signal level) go into `push`."""
        wait_level, wait_count = (self.level - 1, self.previous_groups) if self.waits else (0, 0)
        words = (wait_level * CHAIN_STRIDE, wait_count, self.level * CHAIN_STRIDE, CHAIN_BACKOFF)
        vk.ffi.memmove(push, struct.pack("<4I", *words), 16)
        self.groups += groups


def check_flag(view) -> None:
    """After the fence: did a chained wait give up? (view: the host copy of counter 0)"""
    if int(view[0]) != 0:
        raise GpuError("a chained dispatch gave up waiting for the level before it: this device does "
                       "not run a queue's dispatches in order; set VKNCNN_CHAIN_LEVELS=0")
