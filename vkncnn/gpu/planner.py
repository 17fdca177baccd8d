"""The bridge between a Net and the Vulkan runtime.

`bind_net` decides, at load_param time, whether a Net runs on the GPU (asked for,
and a device exists) and prepares its layers for it. Each Extractor then gets a
`GpuExtractorState`, which turns one extract() into one recorded plan:

* every layer the requested blob needs is recorded into one VkCompute, blobs
  stay on the device, only the requested blob is downloaded;
* a layer without a shader (or a custom Python layer) becomes a host step:
  its inputs are downloaded, it runs on numpy, its outputs are uploaded again
  for the next GPU layer, all inside the same plan;
* a batch (inputs with Mat.n > 1) is one plan too: each item recorded into its own lane
  of the same command buffer, interleaved so that the items run concurrently
  (plan_recorder.py);
* the plan is kept, keyed by the input shapes, the requested blob and what was
  already computed. The next extract with the same key (the next inference)
  only refreshes the input uploads and replays the recorded command buffers:
  per-inference Python work does not grow with the number of layers;
* an input may also be a VkMat already on the device (a KV cache kept there,
  gpu/kv_cache.py): the plan binds its buffer, so its key holds the buffer's
  identity and shape, and the plan replays only for that same buffer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..errors import GpuError, LayerError
from ..graph import Graph
from ..log import logger, warn_once
from .extractor_state import GpuExtractorState
from .vulkan import instance, lifetime
from .vulkan.allocator import VkBlobAllocator, VkWeightAllocator
from .vulkan.buffer_pool import BufferPool
from .vulkan.command import VkTransfer
from .vulkan.device_limits import KernelUnsupported

MAX_PLANS_PER_NET = 8
# device memory a net keeps of its dropped plans' buffers for its next plans (BufferPool)
MAX_POOLED_BYTES = 256 << 20


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
        self.buffer_pool = BufferPool(vkdev, MAX_POOLED_BYTES)
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
        # may a batch be one plan, its items interleaved? Not once a host step was met
        self.batch_lanes = True

    @property
    def released(self) -> bool:
        """release() ran: the weights and pipelines are gone."""
        return self._released

    def gpu_layer(self, layer) -> bool:
        return bool(layer.support_vulkan) and not (layer.featmask & 16) and id(layer) not in self.cpu_layers

    def run_on_cpu(self, layer, why: KernelUnsupported) -> None:
        """From now on `layer` runs on the CPU: a kernel it chose does not fit the device."""
        self.cpu_layers.add(id(layer))
        # one warning per reason, not per layer: a model has dozens of convolutions
        warn_once(f"vkncnn: {layer.type} layers run on the CPU here: {why}")

    def upload_weights(self, layers) -> None:
        if self.weight_allocator is not None:  # load_model again: the plans bind the old weights
            self._retire_plans(self.weight_allocator)
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

    def _retire_plans(self, old_weights) -> None:
        """Drop every plan recorded against `old_weights`: the idle ones now, those lent to
        extractors when returned (they keep the old weights alive until then), and the old
        weights with the last of them. A cached plan replayed after new weights would read
        the old ones, or freed memory."""
        with self._plans_lock:
            doomed = self._take_idle()
            lent = list(self._lent)
            for plan in lent:
                plan.cacheable = False
                plan.keep_alive = old_weights
        for plan in doomed:
            plan.release()
        if not lent:
            old_weights.clear()

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

    def blob_allocator(self) -> VkBlobAllocator:
        """A new plan's blob allocator, drawing on the buffers of dropped plans first."""
        return VkBlobAllocator(self.vkdev, pool=self.buffer_pool)

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
            held = sum(p.bytes_held for p in plans) + self.buffer_pool.bytes_held
        return held + (self.weight_allocator.bytes_held if self.weight_allocator is not None else 0)

    def new_extractor_state(self, blobs: dict, batch: dict, opt) -> GpuExtractorState:
        return GpuExtractorState(self, blobs, batch, opt)

    def release_plans(self) -> None:
        """Drop every cached plan not in use (the next extracts record afresh)."""
        with self._plans_lock:
            doomed = self._take_idle()
        for plan in doomed:
            plan.release()
        self.buffer_pool.clear()

    def release(self, layers) -> None:
        """Free the net's GPU state. Plans lent to live extractors are freed when returned."""
        with self._plans_lock:
            self._released = True
            doomed = self._take_idle()
        self.buffer_pool.max_bytes = 0  # plans returned from now on free their buffers
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
        # last: its buffers hold the device, which may go with them (a retired instance)
        self.buffer_pool.clear()
