"""Where one model's inference time goes, layer by layer: the measurement behind `vkncnn profile`.

numpy path: the extractor's layer observer (Extractor.set_layer_observer) reads
time.perf_counter() around each layer's forward_cpu: wall time, with real start times.
GPU path: the plans' device timestamps (NetGpu.profile = "dispatches"), one after every
dispatch and one after every host step; a layer's time is the sum of its dispatches',
barriers and uploads included. A layer folded into the dispatch of the layer before it
(gpu/fusion.py) has no time of its own: the producer's time includes it. GPU layers have
no start times of their own, so the trace lays them end to end from the inference's start.

Every inference is also timed whole, on the wall clock: input, every output extracted,
the extractor closed. The per-layer times of one inference add up to at most that.
"""

from __future__ import annotations

import platform
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

import vkncnn

from .bench import set_precision
from .cmd_common import CommandError
from .model_source import ModelSource
from .model_summary import infer_shapes


@dataclass
class LayerTiming:
    index: int                # position in the .param
    name: str
    type: str
    runs_on: str              # "cpu" (numpy path), "gpu" (a shader), "host" (numpy inside a GPU plan)
    shapes: list[list[int]]   # one per top, numpy order
    times_us: list[float]     # one per timed inference
    starts_us: list[float]    # per timed inference, from that inference's start
    dispatches: dict[str, list[float]] = field(default_factory=dict)  # GPU: shader -> us per inference
    fused_into: str | None = None  # GPU: the layer whose dispatch computes this one

    @property
    def median_us(self) -> float:
        return statistics.median(self.times_us) if self.times_us else 0.0

    def label(self) -> str:
        return f"{self.type} {self.name}"

    def note(self) -> str:
        """Why a GPU layer has no time of its own, or ""."""
        if self.fused_into:
            return f"fused into {self.fused_into}"
        if self.runs_on == "gpu" and not self.dispatches:
            return "no dispatch of its own"
        return ""


@dataclass
class Profile:
    model: str
    device: str
    path: str         # "cpu" or "gpu"
    precision: str
    clock: str        # what the layer times are
    date: str
    warmup_runs: int
    run_us: list[float]         # wall time of each timed inference
    run_starts_us: list[float]  # when each started, from the first one's start
    layers: list[LayerTiming]   # execution order

    @property
    def loops(self) -> int:
        return len(self.run_us)

    @property
    def layers_total_us(self) -> float:
        """The sum of the layers' median times."""
        return sum(layer.median_us for layer in self.layers)

    @property
    def run_median_us(self) -> float:
        return statistics.median(self.run_us) if self.run_us else 0.0

    def by_type(self) -> list[tuple[str, int, float]]:
        """(type, layer count, summed median us), largest first."""
        kinds: dict[str, list] = {}
        for layer in self.layers:
            entry = kinds.setdefault(layer.type, [0, 0.0])
            entry[0] += 1
            entry[1] += layer.median_us
        return sorted(((k, n, us) for k, (n, us) in kinds.items()), key=lambda row: -row[2])

    def to_json(self) -> dict:
        total = self.layers_total_us or 1.0
        return {
            "model": self.model, "device": self.device, "path": self.path, "precision": self.precision,
            "clock": self.clock, "date": self.date, "loops": self.loops, "warmup_runs": self.warmup_runs,
            "inference_median_us": self.run_median_us, "inference_us": self.run_us,
            "layers_total_us": self.layers_total_us,
            "layers": [{"order": i, "index": t.index, "name": t.name, "type": t.type, "runs_on": t.runs_on,
                        "shapes": t.shapes, "median_us": t.median_us, "share": t.median_us / total,
                        "times_us": t.times_us, "fused_into": t.fused_into,
                        "dispatches": {k: statistics.median(v) for k, v in t.dispatches.items()}}
                       for i, t in enumerate(self.layers)],
        }


# -- running ------------------------------------------------------------------------------------
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _new_net(source: ModelSource, gpu: bool, fp16: bool, device: int, threads: int,
             switches: dict | None = None) -> vkncnn.Net:
    net = vkncnn.Net()
    opt = net.opt
    opt.use_vulkan_compute = gpu
    opt.num_threads = threads
    set_precision(opt, fp16, **(switches or {}))
    if gpu:
        net.set_vulkan_device(device)
    path = str(source.param)
    if path.endswith(".bin"):
        net.load_param_bin(path)
    else:
        net.load_param(path)
    if gpu and net.gpu is None:
        from vkncnn.gpu.vulkan import instance  # lazy: only when --gpu found no device

        reason = instance.unavailable_reason() or "no Vulkan device was found"
        raise CommandError(f"--gpu: no Vulkan device to run on ({reason}); use --cpu for the numpy path")
    net.load_model(source.weights())
    return net


def _execution_order(net: vkncnn.Net) -> list[tuple[int, int]]:
    """(layer index, target blob) of every layer one inference runs, in the order it runs
    them: each output's schedule in turn, as the extractor walks it."""
    graph = net.graph
    have = set(graph.input_indexes())
    order = []
    for name in net.output_names():
        target = graph.find_blob(name)
        for li in graph.schedule(target, available=lambda bi: bi in have):
            order.append((li, target))
            have.update(graph.layers[li].tops)
    return order


def _fused_into(net: vkncnn.Net, order: list[tuple[int, int]]) -> dict[int, int]:
    """GPU path: folded layer -> the layer whose dispatch computes it."""
    from vkncnn.gpu.fusion import plan_fusions  # lazy: the GPU runtime loads only for --gpu

    graph, into = net.graph, {}
    for target in dict.fromkeys(t for _, t in order):
        schedule = [li for li, t in order if t == target]
        fusions = plan_fusions(graph, schedule, target, net.gpu.gpu_layer)
        for producer, act in fusions.activation.items():
            into[act] = producer
        for conv, (eltwise, _, act) in fusions.residual.items():
            into[eltwise] = conv
            if act is not None:
                into[act] = conv
    return into


class _Runner:
    """Runs inferences on random inputs and times each one whole."""

    def __init__(self, net: vkncnn.Net, inputs: dict[str, np.ndarray]) -> None:
        self.net = net
        self.inputs = {name: vkncnn.Mat(arr) for name, arr in inputs.items()}
        self.outputs = net.output_names()

    def infer(self, observer=None) -> tuple[float, float]:
        """(start, end) in perf_counter seconds."""
        start = time.perf_counter()
        with self.net.create_extractor() as ex:
            if observer is not None:
                ex.set_layer_observer(observer)
            for name, mat in self.inputs.items():
                ex.input(name, mat)
            for name in self.outputs:
                ex.extract(name)
        return start, time.perf_counter()


def _warm_up(runner: _Runner, warmup_s: float) -> int:
    """One inference at least (the GPU path records its plans there), then more until
    `warmup_s` seconds have passed."""
    runs, t0 = 0, time.perf_counter()
    while runs == 0 or time.perf_counter() - t0 < warmup_s:
        runner.infer()
        runs += 1
    return runs


def profile_model(source: ModelSource, gpu: bool = False, fp16: bool = True, loops: int = 10,
                  warmup_s: float = 0.0, device: int = 0, threads: int = 1, switches: dict | None = None) -> Profile:
    """Load the model, warm it up, and time `loops` inferences layer by layer; `switches`:
    set_precision's fp16_arithmetic and coopmat."""
    if loops < 1:
        raise CommandError(f"--loops must be at least 1, got {loops}")
    if warmup_s < 0:
        raise CommandError(f"--warmup-s must be 0 or more, got {warmup_s}")
    net = _new_net(source, gpu, fp16, device, threads, switches)
    runner = _Runner(net, source.random_inputs())
    order = _execution_order(net)
    if gpu:
        net.gpu.profile = "dispatches"  # before the first inference: plans get their timers when recorded
        warmups = _warm_up(runner, warmup_s)
        net.gpu.layer_times.clear()
        spans = [runner.infer() for _ in range(loops)]
        layers = _gpu_timings(net, order, net.gpu.layer_times, loops)
        device_name = net.vulkan_device().info.device_name()
        precision = ("fp16 storage and arithmetic" if fp16 and net.opt.use_fp16_arithmetic else
                     "fp16 storage" if fp16 and net.opt.use_fp16_storage else "fp32")
        clock = "GPU timestamps (device time)"
        shape_net = _new_net(source, False, fp16, device, threads)  # blob shapes from one numpy run
    else:
        warmups = _warm_up(runner, warmup_s)
        spans, layers = _cpu_timings(net, runner, order, loops)
        device_name, precision, clock = cpu_name(), "fp32", "wall clock (perf_counter)"
        shape_net = net
    blob_shapes = infer_shapes(shape_net, source.shapes)
    for timing in layers:
        timing.shapes = [list(blob_shapes.get(t, ())) for t in net.graph.layers[timing.index].tops]
    first = spans[0][0]
    return Profile(model=source.label, device=device_name, path="gpu" if gpu else "cpu", precision=precision,
                   clock=clock, date=datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z").strip(),
                   warmup_runs=warmups, run_us=[(end - start) * 1e6 for start, end in spans],
                   run_starts_us=[(start - first) * 1e6 for start, _ in spans], layers=layers)


def _cpu_timings(net, runner: _Runner, order, loops: int):
    layers = net.graph.layers
    position = {id(layer): li for li, layer in enumerate(layers)}
    timings = {li: LayerTiming(li, layers[li].name, layers[li].type, runs_on="cpu", shapes=[], times_us=[],
                               starts_us=[]) for li, _ in order}
    spans = []
    for _ in range(loops):
        seen: dict[int, list[float]] = {}

        def observe(layer, start: float, end: float, seen=seen) -> None:
            span = seen.setdefault(position[id(layer)], [start, 0.0])
            span[1] += end - start  # a layer run twice in one inference sums

        spans.append(runner.infer(observe))
        run_start = spans[-1][0]
        for li, timing in timings.items():
            start, seconds = seen.get(li, (run_start, 0.0))
            timing.times_us.append(seconds * 1e6)
            timing.starts_us.append((start - run_start) * 1e6)
    return spans, list(timings.values())


def _gpu_timings(net, order, layer_times: dict[str, list[float]], loops: int) -> list[LayerTiming]:
    """Per-layer times from the timestamp labels "Type name shader" (shader is `forward_cpu`
    for a host step), in the order the plans ran them."""
    layers = net.graph.layers
    by_label = {}
    for li, _ in order:
        by_label.setdefault(f"{layers[li].type} {layers[li].name}", li)
    fused = _fused_into(net, order)
    timings = {li: LayerTiming(li, layers[li].name, layers[li].type,
                               runs_on="gpu" if net.gpu.gpu_layer(layers[li]) else "host", shapes=[],
                               times_us=[0.0] * loops, starts_us=[],
                               fused_into=layers[fused[li]].name if li in fused else None)
               for li, _ in order}
    for label, values in layer_times.items():
        owner, shader = _split_label(label, by_label)
        if owner is None:
            continue
        runs = (list(values[-loops:]) + [0.0] * loops)[:loops]  # one value per inference
        timing = timings[owner]
        timing.dispatches[shader] = runs
        timing.times_us = [a + b for a, b in zip(timing.times_us, runs)]
    clock = [0.0] * loops  # device time has no host start: lay the layers end to end
    for timing in timings.values():
        timing.starts_us = list(clock)
        clock = [c + t for c, t in zip(clock, timing.times_us)]
    return list(timings.values())


def _split_label(label: str, by_label: dict[str, int]) -> tuple[int | None, str]:
    """("Type name", "shader") of a dispatch label, the layer found by its longest prefix
    (layer names may hold spaces, shader names do not)."""
    parts = label.split(" ")
    for k in range(len(parts) - 1, 1, -1):
        owner = by_label.get(" ".join(parts[:k]))
        if owner is not None:
            return owner, " ".join(parts[k:])
    return by_label.get(label), ""
