"""The bridge between a Net and the Vulkan runtime.

`bind_net` decides, at load_param time, whether a Net runs on the GPU (asked for,
and a device exists) and prepares its layers for it. Each Extractor then gets a
`GpuExtractorState`, which turns one extract() into one recorded plan:

* every layer the requested blob needs is recorded into one VkCompute, blobs
  stay on the device, only the requested blob is downloaded;
* a layer without a shader (or a custom Python layer) becomes a host step:
  its inputs are downloaded, it runs on numpy, its outputs are uploaded again
  for the next GPU layer, all inside the same plan;
* the plan is kept, keyed by the input shapes, the requested blob and what was
  already computed. The next extract with the same key (the next inference)
  only refreshes the input uploads and replays the recorded command buffers:
  per-inference Python work does not grow with the number of layers;
* an input may also be a VkMat already on the device (a KV cache kept there,
  gpu/kv_cache.py): the plan binds its buffer, so its key holds the buffer's
  identity and shape, and the plan replays only for that same buffer.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import numpy as np

from ..errors import GpuError, LayerError
from ..graph import Graph
from ..layer import layer_failure
from ..log import logger, warn_once
from .fusion import plan_fusions
from .vulkan import instance, lifetime
from .vulkan.allocator import VkBlobAllocator, VkWeightAllocator
from .vulkan.command import HostSlot, ReplanNeeded, VkCompute, VkTransfer
from .vulkan.device_limits import KernelUnsupported
from .vulkan.timestamps import LayerTimer

MAX_PLANS_PER_NET = 8


def bind_net(graph: Graph, opt, device_index: int | None):
    """A NetGpu running `graph`, or None (numpy path) with one warning when no GPU can be used.

    `device_index` is the one set_vulkan_device chose (None: the option's, else the best);
    `opt` is the net's live Option, whose switches the device cannot honour are cleared.
    """

    try:
        lifetime.check_not_forked("Vulkan")
        count = instance.get_gpu_count()
    except (GpuError, ImportError, OSError) as e:
        fix = _vulkan_fix(e)
        warn_once(f"vkncnn: Vulkan unavailable ({e}); running on the CPU (numpy) path. {fix + ' ' if fix else ''}"
                  f"{_QUIET_CPU}")
        return None
    if count == 0:
        warn_once("vkncnn: no Vulkan device found (the Vulkan loader works but lists no GPU); running on the "
                  "CPU (numpy) path. Install your GPU's Vulkan driver (or mesa-vulkan-drivers for the CPU "
                  f"driver lavapipe); `vkncnn devices` shows what the loader sees. {_QUIET_CPU}")
        return None
    index = device_index
    why = "set_vulkan_device"
    if index is None:
        if opt.vulkan_device_index >= 0:
            index, why = opt.vulkan_device_index, "opt.vulkan_device_index"
        else:
            index, why = instance.get_default_gpu_index(), "the default: the best of the devices found"
    if not 0 <= index < count:
        raise GpuError(f"set_vulkan_device({index}): only {count} Vulkan device(s) exist")
    try:
        vkdev = instance.get_gpu_device(index)
    except GpuError as e:
        warn_once(f"vkncnn: Vulkan device {index} failed to start ({e}); running on the CPU (numpy) path. "
                  "Pick another device with net.set_vulkan_device(i) (`vkncnn devices` lists them) or update "
                  f"the driver. {_QUIET_CPU}")
        return None
    info = vkdev.info
    logger.info("Vulkan device %d of %d: %s (%s), chosen by %s", index, count, info.device_name(),
                info.type_name(), why)
    _sanitize_options(opt, vkdev)
    for layer in graph.layers:
        layer.vkdev = vkdev
    netgpu = NetGpu(graph, opt, vkdev)
    host = [f"{layer.name} ({layer.type})" for layer in graph.layers if not netgpu.gpu_layer(layer)]
    if host:
        logger.info("%d of %d layers have no Vulkan shader (or are Python layers) and run on the host, between "
                    "GPU steps: %s", len(host), len(graph.layers), ", ".join(host))
    return netgpu


# how to choose the numpy path on purpose, without the warning
_QUIET_CPU = "Set net.opt.use_vulkan_compute = False to run on the CPU without this warning."


def _vulkan_fix(e: BaseException) -> str:
    """What to install for the error that stopped Vulkan from starting."""
    if isinstance(e, ImportError):
        return "Install the Vulkan bindings: pip install 'vkncnn[gpu]'."
    if isinstance(e, OSError):
        return ("Install the Vulkan loader and a driver (on Debian/Ubuntu: apt install libvulkan1 "
                "mesa-vulkan-drivers).")
    return ""  # a GpuError names the fix itself


def _sanitize_options(opt, vkdev) -> None:
    """Clear what the device cannot do, as ncnn's Net does at load_param."""
    info = vkdev.info
    if not info.support_fp16_storage():
        opt.use_fp16_storage = False
        opt.use_fp16_packed = False
    # fp16 arithmetic needs shaderFloat16, and runs on fp16-stored tensors only (the shaders'
    # 16-bit types take both extensions); without either it is fp32 (docs/gpu.md)
    if not (info.support_fp16_arithmetic() and info.support_fp16_storage()):
        opt.use_fp16_arithmetic = False
    opt.use_bf16_storage = False
    opt.use_bf16_packed = False
    if not info.support_cooperative_matrix():
        opt.use_cooperative_matrix = False


# timestamps reserved per layer when a plan is profiled by dispatch (bench --profile dispatches)
DISPATCHES_PER_LAYER = 8


class NetGpu:
    """Per-Net GPU state: the device, uploaded weights and the cache of recorded plans.

    A plan is either idle in the cache or lent to one extractor. Lent plans are held here
    too (`_lent`), so a plan never becomes garbage while an extractor uses it, whatever
    order the collector finalizes a dropped extractor in; `return_plans` takes each lent
    plan back exactly once.
    """

    def __init__(self, graph: Graph, opt, vkdev) -> None:
        self.graph = graph
        self.opt = opt  # the net's live Option
        self.vkdev = vkdev
        self.weight_allocator = None
        self._idle: OrderedDict = OrderedDict()  # key -> idle plans, least recently used first
        self._idle_count = 0
        self._lent: set = set()
        self._released = False
        self._plans_lock = threading.Lock()
        self.plans_recorded = 0  # counters: tests and the bench read them
        self.plans_replayed = 0
        # plans time every GPU layer (True or "layers") or every dispatch ("dispatches"):
        # vkncnn bench --profile
        self.profile: bool | str = False
        self.layer_times: dict[str, list[float]] = {}  # "Type name [shader]" -> microseconds per run
        # layers whose kernel does not fit the device (device_limits.KernelUnsupported), by id
        self.cpu_layers: set[int] = set()

    def gpu_layer(self, layer) -> bool:
        return bool(layer.support_vulkan) and not (layer.featmask & 16) and id(layer) not in self.cpu_layers

    def run_on_cpu(self, layer, why: KernelUnsupported) -> None:
        """From now on `layer` runs on the CPU: a kernel it chose does not fit the device."""
        self.cpu_layers.add(id(layer))
        # one warning per reason, not per layer: a model has dozens of convolutions
        warn_once(f"vkncnn: {layer.type} layers run on the CPU here: {why}")

    def upload_weights(self, layers) -> None:
        self.weight_allocator = VkWeightAllocator(self.vkdev)
        opt = self.opt.copy()
        opt.blob_vkallocator = self.weight_allocator
        cmd = VkTransfer(self.vkdev)
        try:
            for layer in layers:
                if self.gpu_layer(layer):
                    ret = layer.upload_model(cmd, opt)
                    if ret not in (None, 0):
                        raise LayerError(f"layer {layer.name!r} ({layer.type}): upload_model returned {ret}")
            cmd.submit_and_wait()
            self.vkdev.save_pipeline_cache()
        finally:
            cmd.release()
            if cmd.abandoned:  # a timed-out upload may still be writing into the weights
                lifetime.keep_forever(self.weight_allocator)

    # -- plans ------------------------------------------------------------------------
    def checkout_plan(self, key):
        """Lend an idle plan recorded for `key`, or None. Several threads running the same
        shapes each get a plan of their own: the cache holds more than one per key."""
        with self._plans_lock:
            idle = self._idle.get(key)
            if not idle or self._released:
                return None
            plan = idle.pop()
            if idle:
                self._idle.move_to_end(key)
            else:
                del self._idle[key]
            self._idle_count -= 1
            plan.in_use = True
            self._lent.add(plan)
            return plan

    def lend_new_plan(self, plan) -> None:
        """A plan just recorded for an extractor: lent from the start, cached when returned."""
        with self._plans_lock:
            plan.in_use = True
            self._lent.add(plan)

    def count_replay(self) -> None:
        with self._plans_lock:
            self.plans_replayed += 1

    def count_record(self) -> None:
        with self._plans_lock:
            self.plans_recorded += 1

    def return_plans(self, plans) -> None:
        """Take lent plans back (each once; a second return is a no-op) into the cache."""
        doomed = []
        with self._plans_lock:
            for plan in plans:
                if plan not in self._lent:
                    continue
                self._lent.discard(plan)
                plan.in_use = False
                if self._released or not plan.cacheable:
                    doomed.append(plan)
                    continue
                self._idle.setdefault(plan.key, []).append(plan)
                self._idle.move_to_end(plan.key)
                self._idle_count += 1
                while self._idle_count > MAX_PLANS_PER_NET:  # least recently used key first
                    oldest = next(iter(self._idle))
                    idle = self._idle[oldest]
                    doomed.append(idle.pop(0))
                    if not idle:
                        del self._idle[oldest]
                    self._idle_count -= 1
        for plan in doomed:  # outside the lock: freeing takes the device's and allocators' locks
            plan.release()

    def checkin_plan(self, plan) -> None:
        self.return_plans([plan])

    def _take_idle(self) -> list:
        """Empty the cache (caller holds the lock); the plans are the caller's to release."""
        taken = [plan for idle in self._idle.values() for plan in idle]
        self._idle.clear()
        self._idle_count = 0
        return taken

    def bytes_held(self) -> int:
        """Device memory held for this net: weights plus every cached or lent plan's buffers."""
        with self._plans_lock:
            plans = [plan for idle in self._idle.values() for plan in idle] + list(self._lent)
            held = sum(p.allocator.bytes_held for p in plans)
        return held + (self.weight_allocator.bytes_held if self.weight_allocator is not None else 0)

    def new_extractor_state(self, blobs: dict, opt) -> GpuExtractorState:
        return GpuExtractorState(self, blobs, opt)

    def release_plans(self) -> None:
        """Drop every cached plan not in use (the next extracts record afresh)."""
        with self._plans_lock:
            doomed = self._take_idle()
        for plan in doomed:
            plan.release()

    def release(self, layers) -> None:
        """Free the net's GPU state. Plans lent to live extractors are freed when returned."""
        with self._plans_lock:
            self._released = True
            doomed = self._take_idle()
        for plan in doomed:
            plan.release()
        for layer in layers:
            if self.gpu_layer(layer):
                try:
                    layer.destroy_pipeline(self.opt)
                except Exception:
                    pass
        if self.weight_allocator is not None:
            self.weight_allocator.clear()
            self.weight_allocator = None
        if not self.vkdev.destroyed:
            self.vkdev.trim_pools()


class Plan:
    """One recorded extract: its VkCompute, input slots, downloads and the blobs it made."""

    _serials = itertools.count()  # never reused, unlike id(): later plans' keys name earlier ones

    def __init__(self, key, cmd, allocator) -> None:
        self.serial = next(Plan._serials)
        self.key = key
        self.cmd = cmd
        self.allocator = allocator
        self.input_slots: dict[int, object] = {}
        self.download = None
        self.device_blobs: dict[int, object] = {}
        self.in_use = True
        self.cacheable = True
        self.released = False
        self.timer = None  # a LayerTimer when the net is profiled

    def release(self) -> None:
        """Free the plan's command buffers and every buffer it made, in use or pooled:
        once a plan is dropped nothing can read its blobs any more."""
        if self.released:
            return
        self.released = True
        self.cmd.release()
        if self.cmd.abandoned:
            lifetime.keep_forever(self.allocator)  # the GPU may still be using the plan's buffers
            return
        if self.timer is not None:
            self.timer.destroy()
        self.allocator.free_all()
        self.device_blobs = {}


class GpuExtractorState:
    """What one Extractor holds on the GPU: the plans lent to it and their device blobs.

    It shares the extractor's host blobs and options but holds no reference to the
    extractor itself: dropping an extractor frees it by reference counting, at once, and
    its finalizer can hand this state's plans back to the net.
    """

    def __init__(self, netgpu: NetGpu, blobs: dict, opt) -> None:
        self.netgpu = netgpu
        self.blobs = blobs  # the extractor's host blobs (inputs, results), shared, not copied
        self.opt = opt
        self.plans: list[Plan] = []
        self.device_blobs: dict[int, object] = {}
        self.device_inputs: dict[int, object] = {}  # VkMats given as inputs: read (and written) in place

    def forget(self, blob_index: int) -> None:
        """A new input replaces this blob: its device copy is stale (blobs computed from it
        stay, as an ncnn extractor keeps what it computed)."""
        self.device_blobs.pop(blob_index, None)
        self.device_inputs.pop(blob_index, None)

    def input_device(self, blob_index: int, vkmat) -> None:
        """Feed a VkMat on this net's device to a blob: layers read it where it is, no upload."""
        self.forget(blob_index)
        self.device_blobs[blob_index] = self.device_inputs[blob_index] = vkmat

    def release(self) -> None:
        plans, self.plans = self.plans, []
        self.device_blobs = {}
        self.device_inputs = {}
        self.netgpu.return_plans(plans)

    # -- extract ----------------------------------------------------------------------------
    def _key(self, target: int):
        """What a recorded plan depends on: the target, the input shapes, and the earlier
        plans of this extractor whose device blobs it reads (by serial: their buffers)."""
        host = tuple(sorted((bi, a.shape, a.dtype.str) for bi, a in self.blobs.items()))
        earlier = tuple(plan.serial for plan in self.plans)
        given = tuple(sorted((bi, v.binding_key()) for bi, v in self.device_inputs.items()))
        return (target, host, earlier, tuple(sorted(self.device_blobs)), given, self._opt_key())

    def _opt_key(self):
        o = self.opt
        # the budget too: layers check it while recording, a replay checks nothing
        return (o.use_fp16_storage, o.use_packing_layout, o.lightmode, o.use_cooperative_matrix,
                getattr(o, "memory_budget", 0))

    def extract(self, target: int) -> np.ndarray:
        if target in self.blobs:
            return self.blobs[target]
        key = self._key(target)
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
            plan = self._record(key, target)
            self.netgpu.count_record()
        self.plans.append(plan)
        self.device_blobs.update(plan.device_blobs)
        if plan.timer is not None:
            run: dict[str, float] = {}  # a label met twice in one run (a shader a layer dispatches twice) sums
            for label, us in plan.timer.durations():
                run[label] = run.get(label, 0.0) + us
            for label, us in run.items():
                self.netgpu.layer_times.setdefault(label, []).append(us)
        return plan.download.array

    def _replay(self, plan: Plan) -> None:
        for bi, slot in plan.input_slots.items():
            slot.array = self.blobs[bi]
        plan.cmd.replay()

    def _record(self, key, target: int) -> Plan:
        vkdev = self.netgpu.vkdev
        for _attempt in range(len(self.netgpu.graph.layers) + 1):
            plan = Plan(key, VkCompute(vkdev), VkBlobAllocator(vkdev))
            self.netgpu.lend_new_plan(plan)
            try:
                self._record_into(plan, target)
                # a device input may get its buffer while the plan records (a KV cache's first
                # writer sizes it): the plan is for the buffers it bound
                plan.key = self._key(target)
                return plan
            except _LayerToCpu as moved:
                # a kernel did not fit: record the whole plan again with that layer on the CPU
                plan.cacheable = False
                self.netgpu.return_plans([plan])
                self.netgpu.run_on_cpu(moved.layer, moved.why)
            except BaseException:
                plan.cacheable = False  # half recorded: freed on return, never cached
                self.netgpu.return_plans([plan])
                raise
        raise GpuError("recording a plan kept moving layers to the CPU")  # not reached: each try moves one

    def _record_into(self, plan: Plan, target: int) -> None:
        graph, vkdev = self.netgpu.graph, self.netgpu.vkdev
        cmd, allocator = plan.cmd, plan.allocator
        opt = self.opt.copy()
        opt.blob_vkallocator = opt.workspace_vkallocator = allocator
        cmd.use_cooperative_matrix = bool(opt.use_cooperative_matrix)
        device = dict(self.device_blobs)  # VkMats from earlier plans: read, never released
        host = dict(self.blobs)        # arrays (inputs, or CPU-layer outputs via slots)
        host_slots: dict[int, HostSlot] = {}
        owned: set[int] = set()
        pending = {}

        def host_slot(bi: int) -> HostSlot:
            """The slot a host blob is read from; inputs' slots are refreshed at every replay."""
            slot = host_slots.get(bi)
            if slot is None:
                slot = host_slots[bi] = HostSlot(host[bi])
                if bi in self.blobs:
                    plan.input_slots[bi] = slot
            return slot

        def on_device(bi: int, elempack: int):
            v = device.get(bi)
            if v is None:
                v = device[bi] = cmd.record_upload(host_slot(bi), opt, elempack=elempack)
                owned.add(bi)
                return v
            if v.elempack != elempack and elempack in (1, 4):
                return vkdev.convert_packing(v, elempack, cmd, opt)
            return v

        def on_host(bi: int):
            """A callable giving the blob's current host array when the step runs."""
            if bi in host:
                slot = host_slot(bi)
                return lambda: slot.array
            d = cmd.record_download(device[bi], opt, what=f"the host copy of blob {graph.blobs[bi].name!r}")
            return lambda: d.array

        schedule = graph.schedule(target, available=lambda bi: bi in device or bi in host)
        fusions = plan_fusions(graph, schedule, target, self.netgpu.gpu_layer)
        by_dispatch = self.netgpu.profile == "dispatches"
        if self.netgpu.profile:
            # by dispatch: room for DISPATCHES_PER_LAYER a layer on average (Winograd takes 3,
            # split-K 2); marks past the pool's end are dropped, never wrong
            per_layer = DISPATCHES_PER_LAYER if by_dispatch else 1
            plan.timer = LayerTimer(vkdev, per_layer * len(schedule) + 2)
            plan.timer.start(cmd)
        for li in schedule:
            layer = graph.layers[li]
            if by_dispatch:
                cmd.after_dispatch = (lambda name, label=f"{layer.type} {layer.name}":
                                      plan.timer.mark(cmd, f"{label} {name}"))
            if li in fusions.folded:
                pass  # recorded inside the dispatch of the layer before it
            elif self.netgpu.gpu_layer(layer):
                bottoms = [on_device(bi, _wanted_elempack(layer, host.get(bi), device.get(bi), opt))
                           for bi in layer.bottoms]
                try:
                    tops = self._record_gpu_layer(li, layer, bottoms, cmd, opt, fusions, on_device, host, device)
                except KernelUnsupported as e:
                    raise _LayerToCpu(layer, e) from e
                except Exception as e:
                    raise layer_failure(layer, e, "on GPU") from e
                if len(tops) != len(layer.tops):
                    raise LayerError(f"layer {layer.name!r} returned {len(tops)} GPU blobs, "
                                     f"expected {len(layer.tops)}")
                # a fused dispatch stores only the last folded layer's blob, never its own
                for bi, v in zip(graph.layers[fusions.output_layer(li)].tops, tops):
                    device[bi] = v
                    owned.add(bi)
                if plan.timer is not None and not by_dispatch:
                    plan.timer.mark(cmd, f"{layer.type} {layer.name}")
            else:
                self._record_cpu_layer(layer, cmd, opt, on_host, host, host_slots)
                if plan.timer is not None:
                    # the host step's own mark: its time would otherwise fall to the next GPU layer
                    plan.timer.mark(cmd, f"{layer.type} {layer.name}" + (" forward_cpu" if by_dispatch else ""))
            if opt.lightmode:
                self._release_consumed(li, device, owned, pending, target)
        if target in device:
            plan.download = cmd.record_download(device[target], opt,
                                                what=f"the host copy of blob {graph.blobs[target].name!r}")
        cmd.submit_and_wait()
        vkdev.save_pipeline_cache()  # pipelines first made while recording
        if plan.download is None:  # the target came out of a host (CPU) step
            plan.download = _SlotView(host_slots[target])
        plan.device_blobs = {bi: v for bi, v in device.items() if bi in owned}

    def _record_gpu_layer(self, li, layer, bottoms, cmd, opt, fusions, on_device, host, device) -> list:
        """Record one GPU layer, with whatever the plan folds into its dispatch (fusion.py)."""
        layers = self.netgpu.graph.layers
        if li in fusions.residual:
            eltwise, other, act = fusions.residual[li]
            pack = _wanted_elempack(layers[eltwise], host.get(other), device.get(other), opt)
            spec = layers[act].activation_spec() if act is not None else None
            return layer.forward_gpu(bottoms, cmd, opt, residual=on_device(other, pack), activation=spec)
        if li in fusions.activation:
            return layer.forward_gpu(bottoms, cmd, opt, activation=layers[fusions.activation[li]].activation_spec())
        return layer.forward_gpu(bottoms, cmd, opt)

    @staticmethod
    def _record_cpu_layer(layer, cmd, opt, on_host, host, host_slots) -> None:
        getters = [on_host(bi) for bi in layer.bottoms]
        out_slots = [HostSlot(None) for _ in layer.tops]

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

        cmd.record_host(run)
        cmd.submit_and_wait()  # planning run: the outputs' shapes are needed to go on recording
        for bi, slot in zip(layer.tops, out_slots):
            host_slots[bi] = slot
            host[bi] = slot.array

    def _release_consumed(self, li, device, owned, pending, target) -> None:
        graph = self.netgpu.graph
        for bi in graph.layers[li].bottoms:
            if bi == target or bi not in owned:
                continue
            left = pending.get(bi, len(graph.blobs[bi].consumers)) - 1
            pending[bi] = left
            if left <= 0 and bi in device:
                device.pop(bi).release()
                owned.discard(bi)


class _LayerToCpu(Exception):
    """Raised out of a half-recorded plan: `layer` must run on the CPU (why: KernelUnsupported)."""

    def __init__(self, layer, why: KernelUnsupported) -> None:
        super().__init__(str(why))
        self.layer, self.why = layer, why


class _SlotView:
    """Looks like a Download for a target that a host step produced."""

    def __init__(self, slot) -> None:
        self._slot = slot

    @property
    def array(self):
        return self._slot.array


def _wanted_elempack(layer, host_array, vkmat, opt) -> int:
    """ncnn's rule: pack4 when the layer supports it and the packing axis divides by 4."""
    if not (opt.use_packing_layout and layer.support_vulkan_packing):
        return 1
    if layer.support_vulkan_any_packing and vkmat is not None:
        return vkmat.elempack
    if vkmat is not None:
        axis = {1: vkmat.w, 2: vkmat.h}.get(vkmat.dims, vkmat.c) * vkmat.elempack
    elif host_array is not None:
        axis = host_array.shape[0]
    else:
        return 1
    return 4 if axis % 4 == 0 else 1
