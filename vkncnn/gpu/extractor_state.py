"""What one Extractor holds on the GPU: the plans lent to it and the device blobs they made."""

from __future__ import annotations

import numpy as np

from ..batch_forward import item, stack_items
from ..errors import GpuError
from ..log import logger
from .fold_recording import LayerToCpu
from .plan_recorder import ItemRecorder, Plan
from .vulkan.command import LanesUnsupported, ReplanNeeded, VkCompute


def plan_opt_key(opt) -> tuple:
    """The options a recorded plan depends on (part of its key)."""
    # the budget too: layers check it while recording, a replay checks nothing
    return (opt.use_fp16_storage, opt.use_packing_layout, opt.lightmode, opt.use_cooperative_matrix,
            getattr(opt, "memory_budget", 0))


class GpuExtractorState:
    """The GPU side of one Extractor.

    It shares the extractor's host blobs, batch sizes and options but holds no reference to
    the extractor itself: dropping an extractor frees it by reference counting, at once,
    and its finalizer can hand this state's plans back to the net.

    Device blobs are kept per item: one dict for an ordinary extract, one per item when the
    extractor holds a batch (extract_batch), so that a later extract reads what an earlier
    one left on the device.
    """

    def __init__(self, netgpu, blobs: dict, batch: dict, opt) -> None:
        self.netgpu = netgpu
        self.blobs = blobs  # the extractor's host blobs (inputs, results), shared, not copied
        self.batch = batch  # the extractor's batch sizes of its batched blobs, shared
        self.opt = opt
        self.plans: list[Plan] = []
        self.device_blobs: list[dict[int, object]] = [{}]  # per item
        self.device_inputs: dict[int, object] = {}  # VkMats given as inputs: read (and written) in place

    def forget(self, blob_index: int) -> None:
        """A new input replaces this blob: its device copy is stale (blobs computed from it
        stay, as an ncnn extractor keeps what it computed)."""
        for blobs in self.device_blobs:
            blobs.pop(blob_index, None)
        self.device_inputs.pop(blob_index, None)

    def input_device(self, blob_index: int, vkmat) -> None:
        """Feed a VkMat on this net's device to a blob: layers read it where it is, no upload."""
        self.forget(blob_index)
        self.device_blobs[0][blob_index] = self.device_inputs[blob_index] = vkmat

    def release(self) -> None:
        plans, self.plans = self.plans, []
        self.device_blobs = [{}]
        self.device_inputs = {}
        self.netgpu.return_plans(plans)

    # -- extract ----------------------------------------------------------------------------
    def _key(self, target: int, n: int):
        """What a recorded plan depends on: the target, the input shapes and batch sizes, and
        the earlier plans of this extractor whose device blobs it reads (by serial: their
        buffers)."""
        host = tuple(sorted((bi, a.shape, a.dtype.str) for bi, a in self.blobs.items()))
        earlier = tuple(plan.serial for plan in self.plans)
        given = tuple(sorted((bi, v.binding_key()) for bi, v in self.device_inputs.items()))
        on_device = tuple(sorted(self.device_blobs[0]))
        return (target, n, host, tuple(sorted(self.batch.items())), earlier, on_device, given, self._opt_key())

    def _opt_key(self):
        return plan_opt_key(self.opt)

    def extract(self, target: int) -> np.ndarray:
        """The target's values, computed on the GPU (one item)."""
        if target in self.blobs:
            return self.blobs[target]
        self._items(1)
        return self._run(target, 1)[0]

    def extract_batch(self, target: int, n: int) -> np.ndarray | None:
        """The target's values for each of the n items, stacked: one plan, the items
        interleaved in one command buffer. None where a batch cannot be one plan (a host
        step in the net, a profiled net, a VkMat input): the caller runs the items one by one."""
        if self.netgpu.profile or not self.netgpu.batch_lanes or self.device_inputs:
            return None
        self._items(n)
        try:
            outputs = self._run(target, n)
        except LanesUnsupported as e:
            logger.debug("batches of %s run item by item: %s", self.netgpu.graph.source, e)
            self.netgpu.batch_lanes = False  # a host step: every batch of this net goes item by item
            return None
        name = self.netgpu.graph.blobs[target].name
        return stack_items(f"blob {name!r}", [np.asarray(a, dtype=np.float32) for a in outputs])

    def _items(self, n: int) -> None:
        """Device blobs for n items: those of another batch size are of no use any more
        (the host blobs they came from stay, and are uploaded again where needed)."""
        if len(self.device_blobs) != n:
            self.device_blobs = [{} for _ in range(n)]

    def _run(self, target: int, n: int) -> list:
        key = self._key(target, n)
        plan = self.netgpu.checkout_plan(key)
        if plan is not None:
            try:
                self._replay(plan)
                self.netgpu.count_replay()
            except ReplanNeeded:
                plan.cacheable = False
                self.netgpu.return_plans([plan])
                plan = None
            except BaseException:
                plan.cacheable = False  # stopped part way: its blobs are not to be trusted
                self.netgpu.return_plans([plan])
                raise
        if plan is None:
            plan = self._record(key, target, n)
            self.netgpu.count_record()
        self.plans.append(plan)
        for blobs, made in zip(self.device_blobs, plan.device_blobs):
            blobs.update(made)
        if plan.timer is not None:
            self.add_times(plan)
        return [download.array for download in plan.downloads]

    def add_times(self, plan: Plan) -> None:
        """A profiled plan's device times of its last run, into the net's layer_times."""
        run: dict[str, float] = {}  # a label met twice in one run (a shader a layer dispatches twice) sums
        for label, us in plan.timer.durations():
            run[label] = run.get(label, 0.0) + us
        for label, us in run.items():
            self.netgpu.layer_times.setdefault(label, []).append(us)

    def _item_blobs(self, b: int, n: int) -> dict:
        """Item b's host blobs: its slice of each batched blob, the unbatched ones whole."""
        if n == 1:
            return self.blobs
        return {bi: item(data, self.batch.get(bi, 1), b) for bi, data in self.blobs.items()}

    def _replay(self, plan: Plan) -> None:
        n = len(plan.input_slots)
        for b, slots in enumerate(plan.input_slots):
            blobs = self._item_blobs(b, n)
            for bi, slot in slots.items():
                slot.array = blobs[bi]
        plan.cmd.replay()

    def _record(self, key, target: int, n: int) -> Plan:
        vkdev = self.netgpu.vkdev
        for _attempt in range(len(self.netgpu.graph.layers) + 1):
            plan = Plan(key, VkCompute(vkdev), [self.netgpu.blob_allocator() for _ in range(n)])
            self.netgpu.lend_new_plan(plan)
            try:
                self._record_into(plan, target, n)
                # a device input may get its buffer while the plan records (a KV cache's first
                # writer sizes it): the plan is for the buffers it bound
                plan.key = self._key(target, n)
                return plan
            except LayerToCpu as moved:
                # a kernel did not fit: record the whole plan again with that layer on the CPU
                plan.cacheable = False
                self.netgpu.return_plans([plan])
                self.netgpu.run_on_cpu(moved.layer, moved.why)
            except BaseException:
                plan.cacheable = False  # half recorded: freed on return, never cached
                self.netgpu.return_plans([plan])
                raise
        raise GpuError("recording a plan kept moving layers to the CPU")  # not reached: each try moves one

    def _record_into(self, plan: Plan, target: int, n: int) -> None:
        cmd = plan.cmd
        cmd.use_cooperative_matrix = bool(self.opt.use_cooperative_matrix)
        recorders = [ItemRecorder(self.netgpu, plan, b, self.opt, self.device_blobs[b], self._item_blobs(b, n))
                     for b in range(n)]
        if n == 1:
            recorders[0].record(target)
        else:
            cmd.begin_lanes(n)
            for b, recorder in enumerate(recorders):
                cmd.lane(b)
                recorder.record(target)
            cmd.end_lanes()
        cmd.submit_and_wait()
        self.netgpu.vkdev.save_pipeline_cache()  # pipelines first made while recording
        for recorder in recorders:
            recorder.finish(target)
