"""Recording one extract into a Plan: the layers a blob needs, as GPU dispatches and host steps.

A Plan holds one VkCompute and the buffers its commands use. An ItemRecorder walks the
schedule for one item: layers with a shader are recorded as dispatches on device blobs,
the others as host steps between GPU segments (their inputs downloaded, their outputs
uploaded again); the folds it decides as it records are in fold_recording.py. A batch
records one ItemRecorder per item, each into its own lane of the same VkCompute and with
its own blob allocator, so that the items' dispatches interleave and run concurrently
(VkCompute.begin_lanes); a host step cannot be part of a lane, so a batch through such a
net is recorded item by item by the caller instead.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import LayerError
from ..layer import layer_failure
from .fold_recording import FoldRecording, recording_on_gpu
from .fusion import Fusions, plan_fusions
from .ops import data_movement as gather
from .ops.split_records import SplitRecords
from .vulkan import lifetime
from .vulkan.command import HostSlot
from .vulkan.timestamps import LayerTimer

# timestamps reserved per layer when a plan is profiled by dispatch (bench --profile dispatches)
DISPATCHES_PER_LAYER = 8


class Plan:
    """One recorded extract: its VkCompute, and per item its input slots, its download and
    the device blobs it made (one item, or the items of a batch)."""

    _serials = itertools.count()  # never reused, unlike id(): later plans' keys name earlier ones

    def __init__(self, key, cmd, allocators: list) -> None:
        self.serial = next(Plan._serials)
        self.key = key
        self.cmd = cmd
        self.allocators = allocators  # one blob allocator per item
        self.input_slots: list[dict[int, HostSlot]] = [{} for _ in allocators]
        self.downloads: list = [None] * len(allocators)
        self.device_blobs: list[dict[int, object]] = [{} for _ in allocators]
        self.in_use = True
        self.cacheable = True
        self.released = False
        self.timer = None  # a LayerTimer when the net is profiled
        self.keep_alive = None  # weights the net replaced while the plan was lent: freed with the plan

    @property
    def bytes_held(self) -> int:
        return sum(allocator.bytes_held for allocator in self.allocators)

    def release(self) -> None:
        """Free the plan's command buffers and every buffer it made, in use or pooled:
        once a plan is dropped nothing can read its blobs any more. The buffers go to the
        net's BufferPool where its allocators have one (VkAllocator.hand_back)."""
        if self.released:
            return
        self.released = True
        self.cmd.release()
        if self.cmd.abandoned:
            lifetime.keep_forever(self.allocators)  # the GPU may still be using the plan's buffers
            return
        if self.timer is not None:
            self.timer.destroy()
        for allocator in self.allocators:
            allocator.hand_back()
        self.device_blobs = [{} for _ in self.allocators]
        self.keep_alive = None  # the last plan to let go of replaced weights frees them (VkAllocator.__del__)


class ItemRecorder(FoldRecording):
    """Records the layers of one item into `plan.cmd` (the current lane, in a batch).

    device: VkMats of earlier plans this item may read (never released here); host: the
    item's host arrays (inputs, whose slots are refreshed at every replay).
    """

    def __init__(self, netgpu, plan: Plan, item: int, opt, device: dict, host: dict) -> None:
        self.netgpu = netgpu
        self.graph = netgpu.graph
        self.plan, self.item = plan, item
        self.cmd = plan.cmd
        self.opt = opt.copy()
        self.opt.blob_vkallocator = self.opt.workspace_vkallocator = plan.allocators[item]
        self.inputs = set(host)
        self.device = dict(device)
        self.host = dict(host)
        self.host_slots: dict[int, HostSlot] = {}
        self.owned: set[int] = set()
        self.pending: dict[int, int] = {}
        # blobs of an RMSNorm folded into its Gemm readers, never made: blob -> (the norm's
        # input blob, the norm); and the Splits between, which then record nothing
        self.prenormed: dict[int, tuple] = {}
        self.skipped: set[int] = set()
        # blobs of a head-repeating chain folded into an SDPA's cache write, never made:
        # blob -> (the chain's input blob, the repeat, that input as the SDPA reads it)
        self.repeated: dict[int, tuple] = {}
        # SDPAs that normalise (and rotate) their q and new keys themselves: SDPA -> (q RMSNorm,
        # k RMSNorm, (RoPE mode, cos, sin) or None)
        self.qk_norms: dict[int, tuple] = {}

    # -- where a blob is --------------------------------------------------------------------
    def host_slot(self, bi: int) -> HostSlot:
        """The slot a host blob is read from; inputs' slots are refreshed at every replay."""
        slot = self.host_slots.get(bi)
        if slot is None:
            slot = self.host_slots[bi] = HostSlot(self.host[bi])
            if bi in self.inputs:
                self.plan.input_slots[self.item][bi] = slot
        return slot

    def store(self, bi: int, mat) -> None:
        """Blob bi is `mat`, made by this plan (released after its last reader)."""
        self.device[bi] = mat
        self.owned.add(bi)

    def reads_left(self, bi: int) -> int:
        """Readers of blob bi not yet recorded."""
        return self.pending.get(bi, len(self.graph.blobs[bi].consumers))

    def read_later(self, bi: int, readers: int) -> None:
        """`readers` more layers read blob bi (a folded layer's readers read its input)."""
        self.pending[bi] = self.reads_left(bi) + readers

    def on_device(self, bi: int, elempack: int):
        v = self.device.get(bi)
        if v is None:
            v = self.cmd.record_upload(self.host_slot(bi), self.opt, elempack=elempack)
            self.store(bi, v)
            return v
        if v.elempack != elempack and elempack in (1, 4):
            return self.netgpu.vkdev.convert_packing(v, elempack, self.cmd, self.opt)
        return v

    def on_host(self, bi: int):
        """A callable giving the blob's current host array when the step runs."""
        if bi in self.host:
            slot = self.host_slot(bi)
            return lambda: slot.array
        d = self.cmd.record_download(self.device[bi], self.opt,
                                     what=f"the host copy of blob {self.graph.blobs[bi].name!r}")
        return lambda: d.array

    # -- recording --------------------------------------------------------------------------
    def record(self, target: int) -> None:
        """Every layer `target` needs, then its download (Plan.downloads[item])."""
        graph, plan, cmd = self.graph, self.plan, self.cmd
        schedule = by_level(graph, graph.schedule(target, available=lambda bi: bi in self.device or bi in self.host))
        fusions = plan_fusions(graph, schedule, target, self.netgpu.gpu_layer)
        profile = self.netgpu.profile
        by_dispatch = profile == "dispatches"
        if profile:
            # by dispatch: room for DISPATCHES_PER_LAYER a layer on average (Winograd takes 3,
            # split-K 2); marks past the pool's end are dropped, never wrong
            per_layer = DISPATCHES_PER_LAYER if by_dispatch else 1
            plan.timer = LayerTimer(self.netgpu.vkdev, per_layer * len(schedule) + 2)
            plan.timer.start(cmd)
        self._upload_inputs(schedule, fusions, by_dispatch)
        for li in schedule:
            layer = graph.layers[li]
            if by_dispatch:
                cmd.after_dispatch = (lambda name, label=f"{layer.type} {layer.name}":
                                      plan.timer.mark(cmd, f"{label} {name}"))
            if li in fusions.folded or li in self.skipped:
                pass  # recorded inside the dispatch of the layer before it, or those after it
            elif li in fusions.prenorm and self._fold_prenorm(li, layer, fusions.prenorm[li]):
                pass  # its Gemm readers normalise its input themselves
            elif li in fusions.gated and self._record_gated(fusions.gated[li], fusions):
                pass  # the gate and up products and their product in one dispatch
            elif li in fusions.qk_norm and self._fold_qk_norm(fusions.qk_norm[li]):
                pass  # the attention after it normalises its q and keys itself
            elif li in fusions.repeat and self._fold_repeat(layer, fusions.repeat[li]):
                pass  # the SDPA's cache write repeats the heads itself
            elif self.netgpu.gpu_layer(layer):
                self._record_gpu_layer(li, layer, fusions)
                if plan.timer is not None and not by_dispatch:
                    plan.timer.mark(cmd, f"{layer.type} {layer.name}")
            else:
                self._record_cpu_layer(layer)
                if plan.timer is not None:
                    # the host step's own mark: its time would otherwise fall to the next GPU layer
                    plan.timer.mark(cmd, f"{layer.type} {layer.name}" + (" forward_cpu" if by_dispatch else ""))
            if self.opt.lightmode:
                self._release_consumed(li, target)
        if target in self.device:
            plan.downloads[self.item] = cmd.record_download(
                self.device[target], self.opt, what=f"the host copy of blob {graph.blobs[target].name!r}")

    def finish(self, target: int) -> None:
        """After the planning run: where the target's values are, and the blobs made here."""
        if self.plan.downloads[self.item] is None:  # the target came out of a host (CPU) step
            self.plan.downloads[self.item] = _SlotView(self.host_slots[target])
        self.plan.device_blobs[self.item] = {bi: v for bi, v in self.device.items() if bi in self.owned}

    def _upload_inputs(self, schedule: list, fusions, by_dispatch: bool) -> None:
        """Upload every host blob the GPU layers read, first: recorded where a layer first
        needs it, an upload (and its fp16 cast) would put a barrier inside the plan. A
        profiled plan times them as their Input layer's."""
        plan, cmd, graph = self.plan, self.cmd, self.graph
        uploaded = False
        for li in schedule:
            layer = graph.layers[li]
            if li in fusions.folded or not self.netgpu.gpu_layer(layer):
                continue
            for bi in layer.bottoms:
                if bi in self.inputs and bi not in self.device:
                    source = graph.layers[graph.blobs[bi].producer] if graph.blobs[bi].producer >= 0 else None
                    label = f"{source.type} {source.name}" if source is not None else f"Input {graph.blobs[bi].name}"
                    if by_dispatch:
                        cmd.after_dispatch = lambda name, label=label: plan.timer.mark(cmd, f"{label} {name}")
                    self.on_device(bi, self._wanted_elempack(layer, bi))
                    uploaded = True
        if uploaded and plan.timer is not None and not by_dispatch:
            plan.timer.mark(cmd, "Input uploads")

    def _record_gpu_layer(self, li, layer, fusions) -> None:
        """Record one GPU layer, with whatever the plan folds into its dispatch (fusion.py)."""
        layers = self.graph.layers
        folded_in = {}
        if layer.bottoms and layer.bottoms[0] in self.prenormed:
            x, folded_in["prenorm"] = self._gemm_input(layer)
            bottoms = [x]
        else:
            bottoms = []
            for slot, bi in enumerate(layer.bottoms):
                if bi in self.repeated:  # a folded head repeat: its input, and how often
                    _, folded_in.setdefault("repeat_heads", {})[slot], x = self.repeated[bi]
                    bottoms.append(x)
                elif isinstance(self.device.get(bi), SplitRecords):  # never repacked: not a tensor
                    bottoms.append(self.device[bi])
                else:
                    bottoms.append(self.on_device(bi, self._wanted_elempack(layer, bi)))
        if li in self.qk_norms:
            folded_in["qk_norm"] = self.qk_norms[li]
        merge_end = None
        if li in fusions.split_merge:
            merge_end = self._split_merge_end(layer, bottoms, fusions.split_merge[li])
            if merge_end is not None:
                folded_in["split_records"] = True
        rope_shape = None
        if li in fusions.rope:
            folded = self._rope_fold(layer, fusions.rope[li], bottoms[0], folded_in.get("prenorm"))
            if folded is not None:
                folded_in["rope"], rope_shape = folded
        scaling = fusions.scaled.get(li)
        unfold = scaling is not None and not layer.takes_scale(bottoms)
        if scaling is not None and not unfold:
            folded_in["scale"] = float(layers[scaling].b)
        try:
            with recording_on_gpu(layer):
                if not unfold:
                    tops, unfold = self._forward_folded(li, layer, bottoms, fusions, folded_in)
        finally:
            rope = folded_in.get("qk_norm", (None, None, None))[2]
            for angles in rope[1:] if rope is not None else ():
                angles.release()  # the recorded commands keep their buffers
        if unfold:  # outside this layer's recording: each layer fails or moves on its own
            plain = Fusions()
            for index in fusions.unfolded(li):
                self._record_gpu_layer(index, layers[index], plain)
            return
        if len(tops) != len(layer.tops):
            raise LayerError(f"layer {layer.name!r} returned {len(tops)} GPU blobs, expected {len(layer.tops)}")
        if isinstance(tops[0], SplitRecords):  # the product after the views merges them
            self.store(merge_end, tops[0])
            self.skipped.update(fusions.split_merge[li][0])
            for bi, v in zip(layer.tops[1:], tops[1:]):
                self.store(bi, v)
            return
        if rope_shape is not None:  # the rotated product is the RoPE's output, seen in its shape
            views, rope_li = fusions.rope[li]
            rotated = gather.view(tops[0], rope_shape)
            tops[0].release()
            self.store(layers[rope_li].tops[0], rotated)
            self.skipped.update(views + [rope_li])
            return
        # a fused dispatch stores only the last folded layer's blob, never its own
        for bi, v in zip(layers[fusions.output_layer(li)].tops, tops):
            self.store(bi, v)

    def _forward_folded(self, li, layer, bottoms, fusions, folded_in) -> tuple:
        """(tops, False) of layer li's forward_gpu with what folds into its epilogue, or
        (None, True) when it refuses a residual sum as it records."""
        layers, opt, cmd = self.graph.layers, self.opt, self.cmd
        if li in fusions.residual:
            eltwise, other, act = fusions.residual[li]
            spec = layers[act].activation_spec() if act is not None else None
            residual = self.on_device(other, self._wanted_elempack(layers[eltwise], other))
            takes = getattr(layer, "takes_residual", None)
            if takes is not None and not takes(bottoms, residual):
                return None, True
            return layer.forward_gpu(bottoms, cmd, opt, residual=residual, activation=spec, **folded_in), False
        if li in fusions.activation:
            spec = layers[fusions.activation[li]].activation_spec()
            return layer.forward_gpu(bottoms, cmd, opt, activation=spec, **folded_in), False
        return layer.forward_gpu(bottoms, cmd, opt, **folded_in), False

    def _record_cpu_layer(self, layer) -> None:
        getters = [self.on_host(bi) for bi in layer.bottoms]
        out_slots = [HostSlot(None) for _ in layer.tops]
        opt = self.opt

        def run() -> None:  # holds the plan's own options, nothing of the extractor
            bottoms = [g() for g in getters]
            try:
                tops = layer.forward_cpu(bottoms, opt)
            except Exception as e:
                raise layer_failure(layer, e) from e
            for slot, arr in zip(out_slots, tops):
                # int8 tops (a requantizing int8 layer) stay int8 for the next int8 layer
                keep = arr.dtype in (np.float32, np.int8)
                slot.array = np.ascontiguousarray(arr if keep else arr.astype(np.float32))

        self.cmd.record_host(run)
        self.cmd.submit_and_wait()  # planning run: the outputs' shapes are needed to go on recording
        for bi, slot in zip(layer.tops, out_slots):
            self.host_slots[bi] = slot
            self.host[bi] = slot.array

    def _release_consumed(self, li, target) -> None:
        for bi in self.graph.layers[li].bottoms:
            if bi in self.prenormed:  # a folded norm's blob: the Gemm read the norm's input
                if self.graph.layers[li].type == "Split":
                    continue
                bi = self.prenormed[bi][0]
            elif bi in self.repeated:  # a folded head repeat's blob: the SDPA read its input
                bi = self.repeated[bi][0]
            if bi == target or bi not in self.owned:
                continue
            left = self.pending[bi] = self.reads_left(bi) - 1
            if left <= 0 and bi in self.device:
                self.device.pop(bi).release()
                self.owned.discard(bi)

    def _wanted_elempack(self, layer, bi: int) -> int:
        """ncnn's rule: pack4 when the layer supports it and the packing axis divides by 4."""
        opt = self.opt
        if not (opt.use_packing_layout and layer.support_vulkan_packing):
            return 1
        vkmat = self.device.get(bi)
        if layer.support_vulkan_any_packing and vkmat is not None:
            return vkmat.elempack
        if vkmat is not None:
            axis = {1: vkmat.w, 2: vkmat.h}.get(vkmat.dims, vkmat.c) * vkmat.elempack
        elif bi in self.host:
            axis = self.host[bi].shape[0]
        else:
            return 1
        return 4 if axis % 4 == 0 else 1


def by_level(graph, schedule: list) -> list:
    """The schedule reordered by level, each layer as early as its inputs allow (level: one
    more than the highest of its producers in the schedule), the schedule's order kept
    within a level.

    A barrier waits for everything recorded before it (barriers.py), so layers that do not
    depend on each other are best recorded side by side: a decoder block's q, k and v
    products then share one barrier, where a depth-first order puts q's RoPE between them.
    """
    position = {li: i for i, li in enumerate(schedule)}
    level: dict[int, int] = {}
    for li in schedule:  # dependencies first: producers have their level already
        producers = [graph.blobs[bi].producer for bi in graph.layers[li].bottoms]
        level[li] = 1 + max((level[p] for p in producers if p in position), default=-1)
    return sorted(schedule, key=lambda li: (level[li], position[li]))


class _SlotView:
    """Looks like a Download for a target that a host step produced."""

    def __init__(self, slot) -> None:
        self._slot = slot

    @property
    def array(self):
        return self._slot.array
