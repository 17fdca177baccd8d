"""Differential layer fuzzer: random valid one-layer models, vkncnn against real ncnn.

    python -m vkncnn.tools.dev.layerfuzz [--layers Convolution,Pooling] [--cases 50] [--seed 0]
                                         [--paths cpu,gpu,gpu16] [--case N] [--show]
    (also `vkncnn layerfuzz ...`)

For each layer type with a generator (registry.py; a module per layer family) it draws
random valid params over ncnn's parameter space and random input shapes, runs the model in
real ncnn (CPU, fp32, in a child process so a segfault is only a finding) and in vkncnn
on each path: `cpu` (numpy), `gpu` (Vulkan fp32), `gpu16` (Vulkan fp16 storage; `gpuD`,
`gpuT` and their fp16 forms take a discrete GPU's kernels: discrete.py; `gpuR`,
`gpuR16` check a second run of the same net, which replays the first run's plans), and
prints one line per disagreement with the command that replays it (`--case N --show`).
`gpu16a` (and `gpuD16a`, ...): fp16 storage and fp16 arithmetic, where fp16 is checked at
all; it passes within the case's fp16 tolerance or within twice real ncnn's own Vulkan
fp16-arithmetic error on the case, whichever is larger.

Case i of a layer is drawn from a generator seeded by (seed, i, layer), so a reported
case replays alone, on any machine. Exit status 1 when any case failed.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

from vkncnn.errors import Error as VkncnnError
from vkncnn.testing import random_net_weights, rel_err, weights_bin
from vkncnn.tools.dev.ncnn_worker import NcnnCrashed, NcnnWorker

from .case import PATHS, Case
from .discrete import base_path, device_profile
from .known import known_ncnn_bug


@dataclass
class Outcome:
    path: str
    status: str  # ok | mismatch | vk-raised | both-rejected | ncnn-rejected | ncnn-crashed | ncnn-bug
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("mismatch", "vk-raised")


@dataclass
class LayerReport:
    type_name: str
    counts: dict = field(default_factory=dict)   # (path, status) -> n
    failures: list = field(default_factory=list)  # printable lines with the replay command
    notes: list = field(default_factory=list)     # ncnn crashes / ncnn-only rejections


def _case_rng(seed: int, index: int, type_name: str) -> np.random.Generator:
    return np.random.default_rng([seed, index, zlib.crc32(type_name.encode())])


def draw_case(type_name: str, seed: int, index: int):
    from .registry import GENERATORS

    return GENERATORS[type_name](_case_rng(seed, index, type_name))


def run_vkncnn(text: str, wb: bytes, feed: dict, names: list, path: str) -> dict:
    with device_profile(path):
        return _run_vkncnn(text, wb, feed, names, base_path(path), replay=path.startswith("gpuR"))


def _run_vkncnn(text: str, wb: bytes, feed: dict, names: list, path: str, replay: bool = False) -> dict:
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = path != "cpu"
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = path in ("gpu16", "gpu16a")
    net.opt.use_fp16_arithmetic = path == "gpu16a"
    net.load_param_mem(text)
    if path != "cpu" and net.gpu is None:
        raise RuntimeError("no Vulkan device: the GPU paths cannot run")
    net.load_model(wb)
    if replay:
        # a first run on other values of the same shapes records the GPU plans (and a second
        # extractor then replays them, as a model serving frames does): what the case checks
        # is the replayed run
        other = {k: x if x.dtype == np.int32 else (x * np.float32(0.5) + np.float32(0.25)).astype(x.dtype)
                 for k, x in feed.items()}
        _extract(net, other, names)
    return _extract(net, feed, names)


def _extract(net, feed: dict, names: list) -> dict:
    import vkncnn

    with net.create_extractor() as ex:
        for name, arr in feed.items():
            ex.input(name, vkncnn.Mat(arr))
        return {name: ex.extract(name)[1].numpy() for name in names}


def compare(case: Case, want: dict, got: dict, path: str, ncnn16a: dict | None = None) -> str:
    """'' when every output agrees within the path's tolerance, else what differs.

    ncnn16a: real ncnn's own Vulkan fp16-arithmetic outputs (gpu16a paths): twice their error
    against `want` widens that output's tolerance."""
    path = base_path(path)
    for name, w in want.items():
        g = got[name]
        if g.shape != w.shape:
            return f"{name} shape {g.shape} != ncnn {w.shape}"
        tol = case.tol16 if path in ("gpu16", "gpu16a") else case.tol
        if path == "gpu16a" and ncnn16a is not None and getattr(ncnn16a.get(name), "shape", None) == w.shape:
            ncnn_err = rel_err(ncnn16a[name], w)
            if np.isfinite(ncnn_err):
                tol = max(tol, 2 * ncnn_err)
        if path in ("gpu16", "gpu16a"):
            # beyond fp16's range (e.g. max pooling's -FLT_MAX over a window of padding only)
            # fp16 storage holds an inf of the same sign: that is the format, not a bug
            w = np.where((np.abs(w) > 65504) & np.isinf(g) & (np.sign(g) == np.sign(w)), g, w)
        if case.step and g.shape == w.shape and np.all(np.abs(g - w) <= case.step * 1.001):
            continue
        err = rel_err(g, w)
        if err > tol:
            return f"{name} err {err:.3g} > {tol}"
    return ""


def case_model(case: Case) -> tuple[str, bytes, dict]:
    """(.param text, .bin bytes, vkncnn's inputs by blob name) of a case."""
    text = case.param_text()
    wb = random_net_weights(text) if case.weights is None else weights_bin(case.weights)
    # int32 inputs (word ids): ncnn reads their bits from a float Mat, vkncnn takes their values
    feed = {f"in{i}": np.ascontiguousarray(x) if x.dtype == np.int32 else np.ascontiguousarray(x, np.float32)
            for i, x in enumerate(case.inputs)}
    return text, wb, feed


def run_case(case: Case, worker: NcnnWorker, paths=PATHS) -> list[Outcome]:
    text, wb, feed = case_model(case)
    ncnn_feed = {k: x.view(np.float32) for k, x in feed.items()}
    names = case.output_names()
    try:
        kind, want = worker.run(text, wb, ncnn_feed, names)
    except NcnnCrashed as e:
        kind, want = "crashed", str(e)
    ncnn16a = None
    if kind == "ok" and any(base_path(p) == "gpu16a" for p in paths) and "gpu16" in case.paths:
        try:  # real ncnn's own fp16-arithmetic error: what the gpu16a paths are held to
            kind16a, out16a = worker.run(text, wb, ncnn_feed, names, vulkan_fp16a=True)
            ncnn16a = out16a if kind16a == "ok" else None
        except NcnnCrashed:
            ncnn16a = None
    ncnn_bug = known_ncnn_bug(case)
    if ncnn_bug:
        # most known ncnn bugs read or write outside a buffer: the next case gets a fresh
        # child, so a heap corrupted here cannot turn a later case into a false failure
        worker.close()
    outcomes = []
    for path in paths:
        # fp16 arithmetic is checked wherever fp16 storage is
        if base_path(path).removesuffix("a") not in case.paths:
            continue
        try:
            got = run_vkncnn(text, wb, feed, names, path)
            vk_err = None
        except VkncnnError as e:
            vk_err, vk_ours = f"{type(e).__name__}: {e}", True
        except Exception as e:  # anything but a vkncnn.Error is a bug whatever ncnn did
            vk_err, vk_ours = f"{type(e).__name__}: {e}", False
        if vk_err is not None and not vk_ours:
            outcomes.append(Outcome(path, "vk-raised", vk_err + (f" (ncnn: {want})" if kind != "ok" else "")))
        elif kind == "crashed":
            outcomes.append(Outcome(path, "ncnn-crashed", vk_err or "vkncnn computed a result"))
        elif kind == "error":
            outcomes.append(Outcome(path, "both-rejected" if vk_err else "ncnn-rejected", want))
        elif vk_err is not None:
            outcomes.append(Outcome(path, "vk-raised", vk_err))
        else:
            diff = compare(case, want, got, path, ncnn16a)
            outcomes.append(Outcome(path, "mismatch" if diff else "ok", diff))
        if ncnn_bug and outcomes[-1].status in ("mismatch", "ncnn-crashed"):
            outcomes[-1] = Outcome(path, "ncnn-bug", f"{ncnn_bug}; {outcomes[-1].detail}")
    return outcomes


def fuzz_layer(type_name: str, cases: int, seed: int = 0, paths=PATHS, worker: NcnnWorker | None = None,
               start: int = 0) -> LayerReport:
    own = worker is None
    worker = worker or NcnnWorker()
    report = LayerReport(type_name)
    try:
        for i in range(start, start + cases):
            case = draw_case(type_name, seed, i)
            if case is None:
                continue
            for o in run_case(case, worker, paths):
                key = (o.path, o.status)
                report.counts[key] = report.counts.get(key, 0) + 1
                line = (f"[{o.path}] {o.status}: {case.describe()}: {o.detail}\n"
                        f"    replay: python -m vkncnn.tools.dev.layerfuzz --layers {type_name} --seed {seed} "
                        f"--case {i} --paths {o.path} --show")
                if o.failed:
                    report.failures.append(line)
                elif o.status in ("ncnn-crashed", "ncnn-rejected", "ncnn-bug"):
                    report.notes.append(line)
    finally:
        if own:
            worker.close()
    return report


def _show(type_name: str, seed: int, index: int) -> None:
    case = draw_case(type_name, seed, index)
    print(case.param_text())
    for i, x in enumerate(case.inputs):
        print(f"in{i}: shape {x.shape}")


def main(argv=None) -> int:
    from .registry import GENERATORS

    ap = argparse.ArgumentParser(prog="vkncnn layerfuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", default=",".join(GENERATORS), help="comma-separated layer types")
    ap.add_argument("--cases", type=int, default=30, help="cases per layer")
    ap.add_argument("--seed", type=int, default=0, help="seed: case N of a seed is the same on any machine")
    ap.add_argument("--case", type=int, default=None, help="run only case N (a replay)")
    ap.add_argument("--paths", default=",".join(PATHS),
                    help=f"comma-separated vkncnn paths to check against ncnn (default: {','.join(PATHS)})")
    ap.add_argument("--show", action="store_true", help="print the replayed case's .param and shapes")
    ap.add_argument("--notes", action="store_true", help="also print ncnn crashes and ncnn-only rejections")
    args = ap.parse_args(argv)
    paths = tuple(p for p in args.paths.split(",") if p)
    worker = NcnnWorker()
    failed = 0
    try:
        for type_name in [t for t in args.layers.split(",") if t]:
            if args.show and args.case is not None:
                _show(type_name, args.seed, args.case)
            start, n = (args.case, 1) if args.case is not None else (0, args.cases)
            t0 = time.time()
            rep = fuzz_layer(type_name, n, args.seed, paths, worker, start)
            summary = " ".join(f"{p}:{s}={c}" for (p, s), c in sorted(rep.counts.items()))
            print(f"{type_name}: {summary} ({time.time() - t0:.1f}s)", flush=True)
            for line in rep.failures + (rep.notes if args.notes else []):
                print("  " + line, flush=True)
            failed += len(rep.failures)
    finally:
        worker.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
