"""A recorded plan that one owner keeps and runs again and again, with no Extractor around it.

An extract costs the host a fixed amount around its replay: an Extractor made and cleared,
each input checked and looked up by name, the plan's key built from every input, the plan
checked out of the net's cache and handed back, the result copied twice. For a decoder step,
whose 48 cache inputs are the same VkMats at every step and whose replay is short, that was
most of the step's host time (docs/perf-notes.md, "A decode step's host time"). A HeldPlan
records through an extractor's GPU state once, keeps the plan lent to itself, and per run
only refills the host inputs, replays and hands back the target's download.

It records afresh when the owner's key changes (the owner knows when its device inputs get
other buffers: a KV cache that grows), when a host input's shape changes, and when the net
has new weights, a new GPU state, another profile setting or other options than the plan
was recorded with. Its plans bind the owner's buffers, so they go when it lets go of them,
never into the net's cache. One thread at a time: it is its owner's, as a Decoder's
sequence is.
"""

from __future__ import annotations

import numpy as np

from ..errors import GpuError
from ..extractor import defer_gpu_release, run_deferred_releases
from .extractor_state import plan_opt_key
from .vulkan.command import ReplanNeeded, replay_together


class HeldPlan:
    """The plan that computes blob `target` of `net` from the host and device inputs a run gives."""

    def __init__(self, net, target: int) -> None:
        self.net = net
        self.target = target
        self._state = None  # the GpuExtractorState the plan is lent to
        self._plan = None
        self._slots: list = []  # (blob index, HostSlot) of the plan's uploads
        self._recorded_for = None  # (owner key, host inputs, GPU state, weights, profile, options)

    def run(self, key, host: dict[int, np.ndarray], device: dict[int, object]) -> np.ndarray:
        """The target's values (a new array each run: the download's read-back makes it).

        key: whatever identifies the device inputs' buffers and the shapes to the owner;
        host: {blob index: float32 array}; device: {blob index: VkMat on the net's device}."""
        if replay_if_ready([(self, key, host)]):
            return self.output()
        return self._record(key, host, device)

    def fill(self, host: dict[int, np.ndarray]) -> None:
        """replay_if_ready: the host inputs the next replay uploads."""
        for index, slot in self._slots:
            slot.array = host[index]

    def command(self):
        """replay_if_ready: the held plan's VkCompute."""
        return self._plan.cmd

    def replayed(self) -> None:
        """replay_if_ready: the plan ran again (profile times, the net's counter)."""
        if self._plan.timer is not None:
            self._state.add_times(self._plan)
        self.net.gpu.count_replay()

    def ready(self, key, host: dict) -> bool:
        """Would run() replay (rather than record) for this key and these host inputs?"""
        return self._plan is not None and self._recorded_for == self._situation(key, host)

    def output(self) -> np.ndarray:
        """The target's values of the last run (the array its download made)."""
        return self._plan.downloads[0].array

    def blob(self, index: int):
        """The VkMat the plan leaves blob `index` in (another plan may read it there), or None."""
        return self._plan.device_blobs[0].get(index) if self._plan is not None else None

    @property
    def serial(self) -> int | None:
        """The held plan's serial: a new one each time it records (None: none held)."""
        return self._plan.serial if self._plan is not None else None

    def _situation(self, key, host: dict) -> tuple:
        netgpu = self.net.gpu
        if netgpu is None or netgpu.released or not self.net.opt.use_vulkan_compute:
            raise GpuError("the net no longer runs on the GPU path (released, reloaded without Vulkan, or "
                           "opt.use_vulkan_compute turned off)")
        return key, tuple(host), netgpu, netgpu.weight_allocator, netgpu.profile, plan_opt_key(self.net.opt)

    def _record(self, key, host: dict[int, np.ndarray], device: dict[int, object]) -> np.ndarray:
        self.release()
        run_deferred_releases()
        situation = self._situation(key, host)
        if self.net.gpu.weight_allocator is None:  # load_model() made the pipelines and uploaded the weights
            raise GpuError("the net has no weights on the device yet: call load_model() first")
        state = self.net.gpu.new_extractor_state(dict(host), {}, self.net.opt.copy())
        self._state = state
        for index, vkmat in device.items():
            state.input_device(index, vkmat)
        values = state.extract(self.target)
        self._plan = plan = state.plans[-1]
        plan.cacheable = False  # it binds the owner's buffers: of no use to anyone else
        self._slots = list(plan.input_slots[0].items())
        self._recorded_for = situation
        return values

    def release(self) -> None:
        """Let go of the plan (the next run records one)."""
        state, self._state, self._plan, self._slots = self._state, None, None, []
        self._recorded_for = None
        if state is not None:
            state.release()

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state is None:
            return
        try:  # dropped without release(): the plan goes back at the next safe point
            defer_gpu_release(state.release)
        except TypeError:  # at interpreter exit, after the module's globals were cleared
            pass


def replay_if_ready(runs: list[tuple[HeldPlan, object, dict[int, np.ndarray]]]) -> bool:
    """Replay the HeldPlans, each with its (key, host inputs), in order, as one queue submission
    (a later one may read what an earlier one left on the device), if each is ready for them.
    False, nothing replayed, if one is not: it needs run() to record."""
    if not all(held.ready(key, host) for held, key, host in runs):
        return False
    for held, _, host in runs:
        held.fill(host)
    try:
        replay_together([held.command() for held, _, _ in runs])
    except ReplanNeeded:  # a host input's shape or type changed under the same indices
        return False
    except BaseException:
        for held, _, _ in runs:
            held.release()  # stopped part way: their blobs are not to be trusted
        raise
    for held, _, _ in runs:
        held.replayed()
    return True
