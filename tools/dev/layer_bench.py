"""vkncnn layerbench: each distinct layer of the benchmark models, alone, against real ncnn.

    vkncnn layerbench --cpu --threads 2 --models resnet18
    vkncnn layerbench --gpu --models vgg16 --types Convolution --json layers.json

`vkncnn bench --profile` says where our time goes, but ncnn's Python binding has no
per-layer timer, so it cannot say where ncnn is faster. This tool can: it runs a
model once to learn every layer's input shapes, makes a one-layer model (the
layer's own .param line behind Input layers of those shapes, random weights) for
each distinct (type, params, input shapes), and times that model in both runtimes,
interleaved as `vkncnn bench` does. A configuration used n times in the models
weighs n times in the totals, so the rows sorted by `n * (ours - target * ncnn)`
are the layers to work on.

What a one-layer model does not show: each runtime's per-inference overhead
(extractor, input and output copies; on the GPU, the upload and download) is in every row;
and where our numpy path hands channels-last arrays between layers in the model,
the single layer gets a planar input (depthwise convolutions pay a transposing copy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..bench import NcnnRunner, VkncnnRunner, add_runner_arguments, time_interleaved
from ..benchmark_models import INPUT_SHAPES, param_path
from ..randweights import random_weights

# layers not worth a row: they only move or name data
SKIPPED_TYPES = ("Input", "Split", "Noop", "MemoryData")


@dataclass
class LayerConfig:
    """One distinct layer: its .param line's type and params, and its input shapes."""
    type: str
    params: str
    shapes: tuple[tuple[int, ...], ...]
    tops: int
    count: int = 0
    models: set = field(default_factory=set)

    def param_text(self) -> str:
        """A .param of Input layers (one per input shape) feeding this layer alone."""
        lines = [f"Input in{k} 0 1 in{k} {_input_params(shape)}" for k, shape in enumerate(self.shapes)]
        bottoms = " ".join(f"in{k}" for k in range(len(self.shapes)))
        tops = " ".join(f"out{k}" for k in range(self.tops))
        lines.append(f"{self.type} layer {len(self.shapes)} {self.tops} {bottoms} {tops} {self.params}".rstrip())
        blobs = len(self.shapes) + self.tops
        return f"7767517\n{len(lines)} {blobs}\n" + "\n".join(lines) + "\n"


def _input_params(shape: tuple[int, ...]) -> str:
    """Input's params for a numpy (w,), (h, w), (c, h, w) or (c, d, h, w) shape."""
    names = {1: ("0",), 2: ("1", "0"), 3: ("2", "1", "0"), 4: ("2", "11", "1", "0")}[len(shape)]
    return " ".join(f"{k}={v}" for k, v in zip(names, shape))


def _param_lines(path: str) -> dict[str, tuple[str, int, str]]:
    """{layer name: (type, top count, the params after the blob names)} of a text .param."""
    out = {}
    with open(path) as f:
        for line in f.read().splitlines()[2:]:
            tokens = line.split()
            if len(tokens) < 4:
                continue
            nb, nt = int(tokens[2]), int(tokens[3])
            out[tokens[1]] = (tokens[0], nt, " ".join(tokens[4 + nb + nt:]))
    return out


def collect_configs(models: list[str], types: set[str] | None = None) -> list[LayerConfig]:
    """Every distinct layer of `models`, with its input shapes at benchncnn's input size,
    from one numpy-path inference per model."""
    import vkncnn

    configs: dict[tuple, LayerConfig] = {}
    for model in models:
        path = str(param_path(model))
        lines = _param_lines(path)
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = False
        net.load_param(path)
        net.load_model(random_weights(path, seed=0, input_shapes=INPUT_SHAPES[model]))
        for layer in net.layers():
            if layer.type in SKIPPED_TYPES or (types and layer.type not in types) or layer.name not in lines:
                continue
            layer.forward_cpu = _recording(layer, lines[layer.name], model, configs)
        x = np.random.default_rng(1).uniform(-1, 1, INPUT_SHAPES[model]).astype(np.float32)
        with net.create_extractor() as ex:
            for name in net.input_names():
                ex.input(name, vkncnn.Mat(x))
            for name in net.output_names():
                ex.extract(name)
    return list(configs.values())


def _recording(layer, line: tuple[str, int, str], model: str, configs: dict):
    run = layer.forward_cpu
    type_name, tops, params = line

    def forward_cpu(bottoms, opt):
        shapes = tuple(tuple(int(d) for d in b.shape) for b in bottoms)
        if shapes:  # a layer without inputs (MemoryData-like) has nothing to feed
            key = (type_name, params, shapes)
            config = configs.get(key)
            if config is None:
                config = configs[key] = LayerConfig(type_name, params, shapes, tops)
            config.count += 1
            config.models.add(model)
        return run(bottoms, opt)

    return forward_cpu


def bench_config(config: LayerConfig, args, tmpdir: str, index: int) -> dict:
    """Median milliseconds of the one-layer model in both runtimes, interleaved."""
    param = os.path.join(tmpdir, f"layer{index}.param")
    with open(param, "w") as f:
        f.write(config.param_text())
    inputs = {f"in{k}": shape for k, shape in enumerate(config.shapes)}
    weights = random_weights(param, seed=0, input_shapes=inputs)
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in config.shapes]
    runners = [VkncnnRunner(param, weights, args), NcnnRunner(param, weights, args, tmpdir)]
    for _ in range(args.warmup):
        for r in runners:
            r.infer(xs)
    times = time_interleaved(runners, xs, args.loops, args.block, args.settle_ms / 1e3)
    ours, ncnn = (statistics.median(times[r.name]) for r in runners)
    return {"type": config.type, "params": config.params, "shapes": [list(s) for s in config.shapes],
            "count": config.count, "models": sorted(config.models), "vkncnn_ms": ours, "ncnn_ms": ncnn,
            "ratio": ours / ncnn}


def print_table(rows: list[dict], target: float, top: int) -> None:
    excess = sorted(rows, key=lambda r: -r["count"] * (r["vkncnn_ms"] - target * r["ncnn_ms"]))
    print(f"\nrows by count x (ours - {target:g} x ncnn), the time to win back first:")
    print(f"{'excess ms':>9} {'n':>3} {'ours ms':>8} {'ncnn ms':>8} {'ratio':>6}  layer")
    for r in excess[:top]:
        shapes = " ".join("x".join(map(str, s)) for s in r["shapes"])
        print(f"{r['count'] * (r['vkncnn_ms'] - target * r['ncnn_ms']):9.3f} {r['count']:3d} {r['vkncnn_ms']:8.3f} "
              f"{r['ncnn_ms']:8.3f} {r['ratio']:6.2f}  {r['type']} [{shapes}] {r['params'][:60]}")
    ours = sum(r["count"] * r["vkncnn_ms"] for r in rows)
    ncnn = sum(r["count"] * r["ncnn_ms"] for r in rows)
    by_type: dict[str, list[float]] = {}
    for r in rows:
        t = by_type.setdefault(r["type"], [0.0, 0.0])
        t[0] += r["count"] * r["vkncnn_ms"]
        t[1] += r["count"] * r["ncnn_ms"]
    print("by type (ours / ncnn ms): " + ", ".join(
        f"{k} {o:.2f}/{n:.2f}" for k, (o, n) in sorted(by_type.items(), key=lambda kv: -kv[1][0])))
    print(f"all layers, each run alone: ours {ours:.2f} ms, ncnn {ncnn:.2f} ms, ratio {ours / ncnn:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn layerbench", description=__doc__.split("\n\n")[0])
    add_runner_arguments(ap)
    ap.add_argument("--models", default="resnet18", help="comma-separated benchmark model names")
    ap.add_argument("--types", help="comma-separated layer types (default: all)")
    ap.add_argument("--loops", type=int, default=10, help="timed inferences per layer (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed loops first (default 3)")
    ap.add_argument("--block", type=int, help="timed loops per runner before switching (default: 5 CPU, 10 GPU)")
    ap.add_argument("--settle-ms", type=float, help="quiet time before each block (default: 100 CPU, 0 GPU)")
    ap.add_argument("--target", type=float, default=1.0, help="the ratio the excess column measures against")
    ap.add_argument("--top", type=int, default=25, help="rows to print")
    ap.add_argument("--json", metavar="PATH", help="also write every row as JSON")
    args = ap.parse_args(argv)
    args.block = args.block or (10 if args.gpu else 5)
    args.settle_ms = (0.0 if args.gpu else 100.0) if args.settle_ms is None else args.settle_ms
    models = args.models.split(",")
    unknown = [m for m in models if m not in INPUT_SHAPES]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; known: {', '.join(INPUT_SHAPES)}")
    configs = collect_configs(models, set(args.types.split(",")) if args.types else None)
    print(f"device: {'GPU ' + str(args.device) if args.gpu else 'CPU'}  threads: {args.threads}  "
          f"{len(configs)} distinct layers in {', '.join(models)}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, config in enumerate(configs):
            try:
                row = bench_config(config, args, tmp, i)
            except Exception as e:  # one layer ncnn or we cannot run alone: say so, go on
                print(f"  {config.type} {config.params[:50]}: skipped ({type(e).__name__}: {e})")
                continue
            rows.append(row)
            print(f"  {row['vkncnn_ms']:8.3f} {row['ncnn_ms']:8.3f} {row['ratio']:6.2f}  x{config.count} "
                  f"{config.type} {config.params[:60]}", flush=True)
    if rows:
        print_table(rows, args.target, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
