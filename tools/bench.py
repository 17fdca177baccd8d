"""vkncnn bench: benchncnn's model set, or any model, timed, optionally against real ncnn in the same run.

    vkncnn bench --cpu --threads 2 --loops 8
    vkncnn bench --gpu --compare-ncnn --models resnet18,vgg16 --json out.json
    vkncnn bench my.param [my.bin] --shape data=3,224,224
    vkncnn bench --llm --gpu --compare-ncnn              (LLM decoders: tools/llm_bench.py)

A model is a benchmark name or a .param path (tools/model_source.py): a path takes its
input shapes from --shape or from its .param's hints, and seeded random weights when no
.bin is given. A model that fails prints one line with the reason and makes the exit
status 1.

Per model: load time, first inference, then min/median/max over --loops timed
inferences after --warmup. With --compare-ncnn, real ncnn runs the same .param,
the same random weights and the same input on the same device, interleaved
with ours (in blocks on the GPU, in settled blocks on the CPU: see
time_interleaved; machines are noisy, only a same-run ratio means much), and the
ratio vkncnn/ncnn of medians is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from .benchmark_models import INPUT_SHAPES
from .cmd_common import CommandError, non_negative_float, parse_shape
from .interleave import set_timing_defaults, time_interleaved, timing_settings, warm_up
from .llm_bench import add_llm_arguments
from .llm_bench import run as run_llm
from .model_source import ModelSource, resolve_model
from .progress import Progress


def _rss_peak_mb() -> float:
    """Peak resident memory of this process in MB (NaN where the OS has no getrusage)."""
    try:
        import resource  # lazy: Unix-only; Windows has no such module
    except ImportError:
        return float("nan")
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class VkncnnRunner:
    name = "vkncnn"
    batch = 1  # items per inference; > 1 feeds ncnn batched Mats

    def __init__(self, param: str, weights: bytes, args) -> None:
        import vkncnn

        t0 = time.perf_counter()
        self.net = vkncnn.Net()
        o = self.net.opt
        o.use_vulkan_compute = args.gpu
        o.num_threads = args.threads
        set_precision(o, args.fp16, args.fp16_arithmetic, args.coopmat)
        if args.gpu:
            self.net.set_vulkan_device(args.device)
        self.net.load_param(param)
        if args.gpu and self.net.gpu is None:
            raise RuntimeError("no Vulkan device for vkncnn")
        self.net.load_model(weights)
        self.load_s = time.perf_counter() - t0
        self.inputs = self.net.input_names()
        self.outputs = self.net.output_names()
        self.Mat = vkncnn.Mat

    def infer(self, x) -> None:
        with self.net.create_extractor() as ex:
            for name, xi in zip(self.inputs, _per_input(x, self.inputs)):
                ex.input(name, _mat(self.Mat, xi, self.batch))
            for name in self.outputs:
                ex.extract(name)

    def start_profile(self, by: str = "layers") -> None:
        """Per-layer times: GPU timestamps on the Vulkan path (per dispatch when `by` is
        "dispatches"), wall clock per layer on numpy."""
        self.layer_times: dict[str, list[float]] = {}
        if self.net.gpu is not None:
            self.net.gpu.profile = by
            self.net.gpu.layer_times = self.layer_times
            return
        for layer in self.net.layers():
            layer.forward_cpu = _timed(layer, self.layer_times)

    def device_mb(self) -> float:
        gpu = self.net.gpu
        if gpu is None:
            return 0.0
        held = getattr(gpu, "bytes_held", None)
        return (held() if callable(held) else 0) / 2**20


def _timed(layer, sink: dict):
    run = layer.forward_cpu
    label = f"{layer.type} {layer.name}"

    def forward_cpu(bottoms, opt):
        t0 = time.perf_counter()
        out = run(bottoms, opt)
        sink.setdefault(label, []).append((time.perf_counter() - t0) * 1e6)
        return out

    return forward_cpu


def print_profile(model: str, layer_times: dict, top: int = 15, unit: str = "layers", out=print) -> None:
    """The slowest layers and the time by layer type, through `out` (print, or a progress line's)."""
    rows = sorted(((statistics.median(v), k) for k, v in layer_times.items()), reverse=True)
    total = sum(t for t, _ in rows)
    by_type: dict[str, float] = {}
    for t, k in rows:
        by_type[k.split()[0]] = by_type.get(k.split()[0], 0.0) + t
    out(f"  profile of {model}: {total / 1e3:.2f} ms in {len(rows)} {unit} (medians)")
    for t, k in rows[:top]:
        out(f"    {t / 1e3:8.3f} ms {100 * t / total:5.1f}%  {k}")
    out("    by type: " + ", ".join(f"{k} {v / 1e3:.2f} ms" for k, v in
                                     sorted(by_type.items(), key=lambda kv: -kv[1])))


class NcnnRunner:
    name = "ncnn"
    batch = 1

    def __init__(self, param: str, weights: bytes, args, tmpdir: str) -> None:
        import ncnn

        bin_path = os.path.join(tmpdir, os.path.basename(param).rsplit(".", 1)[0] + ".bin")
        with open(bin_path, "wb") as f:
            f.write(weights)
        t0 = time.perf_counter()
        self.net = ncnn.Net()
        o = self.net.opt
        o.use_vulkan_compute = args.gpu
        o.num_threads = args.threads
        set_precision(o, args.fp16, args.fp16_arithmetic, args.coopmat)
        o.use_bf16_storage = False
        if args.gpu:
            self.net.set_vulkan_device(args.device)
        self.net.load_param(param)
        self.net.load_model(bin_path)
        self.load_s = time.perf_counter() - t0
        self.inputs = self.net.input_names()
        self.outputs = self.net.output_names()
        self.ncnn = ncnn

    def infer(self, x) -> None:
        ex = self.net.create_extractor()
        mats = [_mat(self.ncnn.Mat, xi, self.batch).clone() for xi in _per_input(x, self.inputs)]
        for name, m in zip(self.inputs, mats):
            ex.input(name, m)
        for name in self.outputs:
            ex.extract(name)


def set_precision(opt, fp16: bool, fp16_arithmetic: bool = True, coopmat: bool = True) -> None:
    """The precision and kernel switches of add_runner_arguments, on either runtime's Option."""
    opt.use_fp16_storage = opt.use_fp16_packed = fp16
    opt.use_fp16_arithmetic = fp16 and fp16_arithmetic
    if hasattr(opt, "use_cooperative_matrix"):
        opt.use_cooperative_matrix = coopmat
    elif not coopmat and fp16:
        # ncnn's kernels take cooperative matrices only with fp16 storage or packing
        raise CommandError("--no-coopmat: this ncnn Python module has no opt.use_cooperative_matrix, so its "
                           "fp16 kernels keep the tensor cores; --fp32 runs both runtimes without them")


def _mat(mat_class, x, batch: int):
    """A Mat of x; with batch > 1, x's leading axis is the batch (ncnn's batch_index=0)."""
    return mat_class(x, batch_index=0) if batch > 1 else mat_class(x)


def _per_input(x, inputs: list) -> list:
    """One array per net input: `x` itself for each, or x's items when it is a list."""
    return x if isinstance(x, list) else [x] * len(inputs)


def _model_inputs(source: ModelSource, batch: int):
    """One array per input (the array itself when there is one input, as _per_input takes it);
    with batch > 1 each holds `batch` different items along a leading axis."""
    items = [list(source.random_inputs(seed=1 + b).values()) for b in range(batch)]
    inputs = items[0] if batch == 1 else [np.stack(per_input) for per_input in zip(*items)]
    return inputs[0] if len(inputs) == 1 else inputs


def bench_model(source: ModelSource, args, batch: int = 1, out=print) -> dict:
    model = source.label
    weights = source.weights(seed=0)
    x = _model_inputs(source, batch)
    with tempfile.TemporaryDirectory() as tmp:
        param = str(source.param)
        runners = [VkncnnRunner(param, weights, args)]
        if args.compare_ncnn:
            runners.append(NcnnRunner(param, weights, args, tmp))
        for r in runners:
            r.batch = batch
        result = {"model": model, "batch": batch, **timing_settings(args)}
        for r in runners:
            t0 = time.perf_counter()
            r.infer(x)
            result[f"{r.name}_load_ms"] = r.load_s * 1e3
            result[f"{r.name}_first_ms"] = (time.perf_counter() - t0) * 1e3
        warm_up(runners, x, args.warmup, args.warmup_s)
        times = time_interleaved(runners, x, args.loops, args.block, args.settle_ms / 1e3, args.rewarm_ms / 1e3)
        for name, ts in times.items():
            result[f"{name}_min_ms"] = min(ts)
            result[f"{name}_median_ms"] = statistics.median(ts)
            result[f"{name}_max_ms"] = max(ts)
        for name in times:
            result[f"{name}_images_per_s"] = batch * 1e3 / result[f"{name}_median_ms"]
        if args.compare_ncnn:
            result["ratio"] = result["vkncnn_median_ms"] / result["ncnn_median_ms"]
        result["rss_peak_mb"] = _rss_peak_mb()
        result["device_mb"] = runners[0].device_mb()
        if args.profile:
            ours = runners[0]
            ours.start_profile(args.profile)
            if ours.net.gpu is not None:  # timed plans are new plans: record, then replay
                ours.net.gpu.release_plans()
            for _ in range(max(3, args.loops // 2)):
                ours.infer(x)
            result["profile"] = {k: statistics.median(v) for k, v in ours.layer_times.items()}
            by_dispatch = args.profile == "dispatches"
            print_profile(model, ours.layer_times, top=40 if by_dispatch else 15,
                          unit="layer dispatches" if by_dispatch else "layers", out=out)
        return result


def add_runner_arguments(ap: argparse.ArgumentParser) -> None:
    """The options the two runners read: the device, BLAS/OpenMP threads, storage precision."""
    dev = ap.add_mutually_exclusive_group()
    dev.add_argument("--gpu", action="store_true", help="Vulkan path")
    dev.add_argument("--cpu", action="store_true", help="numpy path (default)")
    ap.add_argument("--device", type=int, default=0, help="Vulkan device index")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="CPU threads for BLAS / OpenMP (default: all cores)")
    prec = ap.add_mutually_exclusive_group()
    prec.add_argument("--fp16", dest="fp16", action="store_true", default=True, help="fp16 storage (default)")
    prec.add_argument("--fp32", dest="fp16", action="store_false", help="fp32 storage")
    ap.add_argument("--no-fp16-arithmetic", dest="fp16_arithmetic", action="store_false", default=True,
                    help="fp32 arithmetic with fp16 storage, for both runtimes (default: fp16 arithmetic "
                         "where the device has it, ncnn's default)")
    ap.add_argument("--no-coopmat", dest="coopmat", action="store_false", default=True,
                    help="cooperative matrices (tensor cores) off for both runtimes "
                         "(opt.use_cooperative_matrix = False): the kernels of GPUs without them")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("model", metavar="MODEL", nargs="?",
                    help="a .param path or a benchmark model name (default: --models)")
    ap.add_argument("bin", metavar="MODEL.bin", nargs="?",
                    help="MODEL's weights (default: seeded random weights fitted to the input)")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape, metavar="NAME=DIMS",
                    help="an input's shape in numpy order, NAME=3,224,224 (repeat per input); default: "
                         "benchncnn's for benchmark models, the .param's hints for others")
    add_runner_arguments(ap)
    ap.add_argument("--loops", type=int, default=8, help="timed inferences per model (default 8)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed loops first")
    ap.add_argument("--warmup-s", type=non_negative_float, help="...and at least this many seconds of them "
                    "(default: 2 on the GPU, whose clock ramps up under load; 0 on the CPU)")
    ap.add_argument("--block", type=int, help="timed loops per runner before switching "
                    "(default: 5 on the CPU, 10 on the GPU)")
    ap.add_argument("--settle-ms", type=non_negative_float, help="quiet time before each block, letting the other "
                    "runtime's threads sleep (default: 300 on the CPU, 0 on the GPU)")
    ap.add_argument("--rewarm-ms", type=non_negative_float, help="untimed inferences of a runner right before each of "
                    "its timed blocks, for at least this long (one at least), so that each block starts on a "
                    "clock its own runtime ramped up (default: 300 on the GPU, 0 on the CPU)")
    ap.add_argument("--models", help="comma-separated benchmark names or .param paths "
                    "(default: every benchmark model)")
    ap.add_argument("--compare-ncnn", action="store_true", help="run real ncnn in the same run")
    ap.add_argument("--batch", type=parse_batches, default=[1], metavar="N[,N...]",
                    help="items per inference, fed as ncnn batched Mats (Mat(x, batch_index=0)); the table "
                         "adds images/s; e.g. --batch 1,8,32 (default 1)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--profile", nargs="?", const="layers", choices=("layers", "dispatches"),
                    help="also print a per-layer time breakdown (GPU: per dispatch with 'dispatches')")
    ap.add_argument("--quiet", "-q", action="store_true",
                    help="no progress line on stderr over many models (it shows only on a terminal)")
    add_llm_arguments(ap)


def parse_batches(text: str) -> list[int]:
    try:
        sizes = [int(t) for t in text.replace("x", ",").split(",") if t.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected batch sizes >= 1 such as 1,8,32, got {text!r}")
    return sizes


def model_sources(args) -> list[ModelSource]:
    """Every model to time, resolved before any is timed: a wrong name or path fails at once."""
    if args.model and args.models:
        raise CommandError("give the model either as MODEL or with --models, not both")
    if args.bin and not args.model:
        raise CommandError("a MODEL.bin needs its MODEL.param before it")
    if args.model:
        return [resolve_model(args.model, args.shape, args.bin)]
    names = args.models.split(",") if args.models else list(INPUT_SHAPES)
    return [resolve_model(name, args.shape) for name in names if name]


def run(args) -> int:
    """Time each model; 1 when any failed (each failure is one line of the table)."""
    if args.llm:
        return run_llm(args)
    set_timing_defaults(args)
    if args.threads:
        os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    sources = model_sources(args)
    width = max(20, *(len(s.label) + 2 for s in sources))
    results = []
    batched = args.batch != [1]
    head = (f"{'model':<{width}}" + (f"{'batch':>6}" if batched else "")
            + f"{'load ms':>9}{'first ms':>10}{'min':>9}{'median':>9}{'max':>9}" + (f"{'img/s':>9}" if batched else ""))
    if args.compare_ncnn:
        head += f"{'ncnn med':>10}" + (f"{'ncnn i/s':>10}" if batched else "") + f"{'ratio':>7}"
    print(f"device: {'GPU ' + str(args.device) if args.gpu else 'CPU'}  storage: "
          f"{'fp16' if args.fp16 and args.gpu else 'fp32'}  threads: {args.threads}  "
          f"interleave: blocks of {args.block}, {args.settle_ms:g} ms apart, "
          f"re-warmed {args.rewarm_ms:g} ms")
    print(head)
    failed = 0
    with Progress(len(sources) * len(args.batch), "bench", quiet=args.quiet) as progress:
        for source in sources:
            for batch in args.batch:
                r = _bench_line(source, args, batch, width, batched, out=progress.print)
                results.append(r)
                failed += "error" in r
                progress.advance(source.label)
    print(f"peak host RSS {_rss_peak_mb():.0f} MB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


def _bench_line(source: ModelSource, args, batch: int, width: int, batched: bool, out=print) -> dict:
    """Time one model at one batch size and print its line of the table."""
    model = source.label
    label = f"{model:<{width}}" + (f"{batch:>6}" if batched else "")
    try:
        r = bench_model(source, args, batch, out=out)
    except Exception as e:
        reason = " ".join(f"{type(e).__name__}: {e}".split())
        out(f"{label} failed: {reason}")
        return {"model": model, "batch": batch, "error": reason}
    line = (f"{label}{r['vkncnn_load_ms']:9.1f}{r['vkncnn_first_ms']:10.1f}{r['vkncnn_min_ms']:9.2f}"
            f"{r['vkncnn_median_ms']:9.2f}{r['vkncnn_max_ms']:9.2f}")
    if batched:
        line += f"{r['vkncnn_images_per_s']:9.1f}"
    if args.compare_ncnn:
        line += f"{r['ncnn_median_ms']:10.2f}" + (f"{r['ncnn_images_per_s']:10.1f}" if batched else "")
        line += f"{r['ratio']:7.2f}"
    out(line)
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn bench", description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
