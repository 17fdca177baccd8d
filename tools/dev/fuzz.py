"""Fuzz vkncnn with mutated real models: every case runs to its outputs or raises vkncnn.Error.

    python -m vkncnn.tools.dev.fuzz --cases 100000 [--seed 0] [--workers 2] [--gpu] [--save DIR]
    python -m vkncnn.tools.dev.fuzz --load-only --cases 100000     (loading only, as before)

Each case is a model made from real .param files (ncnn's benchmark set, digits with
its weights) or from one or two random valid layers, with params edited to hostile
values (sizes, pads, strides, scales, axes, shape expressions, shape hints), input
shapes changed (zero extents, other ranks and channels, large extents), sometimes
written as .param.bin and sometimes byte-damaged too (tools/dev/fuzz_cases.py). A worker
process loads it, feeds the inputs and extracts every output on the numpy path (or the
Vulkan path with --gpu), under a per-net memory budget (opt.memory_budget).

A case fails when it raises anything but a vkncnn.Error (also when a layer's foreign
exception comes wrapped in a LayerError), crashes the worker, spends more CPU time than
the limit (or wall time than the wall limit), or grows the worker's peak resident memory
beyond budget + margin (on a CPU Vulkan device such as lavapipe, not counting the device
memory, which lives in that RSS and is held to the budget buffer by buffer). Prints counts
per outcome and per error type, cases/s, and each failure with its replay command; exits 1
on any failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import fuzz_cases, fuzz_pool
from .fuzz_cases import Case
from .fuzz_load import BENCHMARK_DIR, DATA, load_case, mutate, run_case, seed_corpus  # noqa: F401 - load-time API
from .fuzz_pool import FAILURES, Limits, Result


@dataclass
class Report:
    counts: collections.Counter = field(default_factory=collections.Counter)  # outcome -> n
    failures: list = field(default_factory=list)   # Results
    slowest: list = field(default_factory=list)    # (cpu s, index, origin)
    largest: list = field(default_factory=list)    # (growth bytes, index, origin)
    examples: dict = field(default_factory=dict)   # error type -> (index, its message), the first seen
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return sum(self.counts[k] for k in FAILURES)

    def add(self, r: Result, keep: int = 5) -> None:
        self.counts[r.outcome] += 1
        if r.outcome in FAILURES:
            self.failures.append(r)
        elif r.outcome != "ok":
            self.examples.setdefault(r.outcome, (r.case.index, r.detail.split("\n")[0]))
        for board, value in ((self.slowest, r.cpu), (self.largest, r.growth)):
            board.append((value, r.case.index, r.case.origin[:100]))
            board.sort(reverse=True)
            del board[keep:]


def cases_for(seed: int, count: int, start: int = 0, gpu: bool = False, budget: int = 64 << 20,
              load_only: bool = False):
    for i in range(start, start + count):
        yield fuzz_cases.draw(seed, i, gpu=gpu, budget=budget, load_only=load_only)


def fuzz(cases, limits: Limits | None = None, workers: int = 2, gpu: bool = False, progress: int = 0,
         save: Path | None = None, seed: int = 0, out=sys.stdout) -> Report:
    """Run Cases (any iterable) on a worker pool; failures are printed as they come."""
    limits = limits or Limits()
    report = Report()
    t0 = time.monotonic()
    for n, result in enumerate(fuzz_pool.run(cases, limits, workers, gpu), start=1):
        report.add(result)
        if result.outcome in FAILURES:
            print(failure_text(result, seed, save), file=out, flush=True)
            if save is not None:
                save_case(result, save, seed)
        if progress and n % progress == 0:
            rate = n / (time.monotonic() - t0)
            print(f"{n} cases, {rate:.1f}/s: {dict(report.counts.most_common())}", file=out, flush=True)
    report.seconds = time.monotonic() - t0
    return report


def failure_text(r: Result, seed: int, save: Path | None) -> str:
    c = r.case
    replay = (f"python -m vkncnn.tools.dev.fuzz --seed {seed} --case {c.index}" + (" --gpu" if c.gpu else "")
              + (" --load-only" if c.mode == "load" else "") + " --show")
    if save is not None:
        replay += f"\n    or: python -m vkncnn.tools.dev.fuzz --replay {save / f'case-{c.index}'}"
    return f"case {c.index}: {r.outcome}: {r.detail}\n    case: {c.describe()}\n    replay: {replay}"


def save_case(r: Result, folder: Path, seed: int) -> Path:
    c = r.case
    where = folder / f"case-{c.index}"
    where.mkdir(parents=True, exist_ok=True)
    (where / ("model.param.bin" if c.fmt == "binary" else "model.param")).write_bytes(c.param)
    if c.weights:
        (where / "model.bin").write_bytes(c.weights)
    meta = {k: v for k, v in asdict(c).items() if k not in ("param", "weights")}
    meta.update(seed=seed, outcome=r.outcome, detail=r.detail)
    (where / "case.json").write_text(json.dumps(meta, indent=1))
    return where


def load_saved(where: Path) -> Case:
    meta = json.loads((where / "case.json").read_text())
    binary = meta["fmt"] == "binary"
    param = (where / ("model.param.bin" if binary else "model.param")).read_bytes()
    weights = (where / "model.bin").read_bytes() if (where / "model.bin").exists() else b""
    fields = {k: meta[k] for k in ("index", "mode", "fmt", "fill", "outputs", "gpu", "origin")}
    fields["inputs"] = [(n, tuple(s), d) for n, s, d in meta["inputs"]]
    return Case(param=param, weights=weights, **fields)


def replay(case: Case, budget: int, show: bool) -> int:
    """Run one case in this process (no watchdog): its outcome, and the traceback of a failure."""
    from .fuzz_worker import measure

    if show:
        print(f"case {case.index}: {case.describe()}")
        if case.fmt == "text":
            print(case.param.decode("utf-8", "replace"))
        else:
            print(f"(.param.bin of {len(case.param)} bytes)")
    r = measure(case, budget)
    device = f" ({r['device'] >> 20} MiB of it device memory)" if r.get("device") else ""
    print(f"outcome: {r['outcome']} in {r['cpu']:.3f} s CPU, peak RSS +{r['growth'] >> 20} MiB{device}")
    if r["detail"]:
        print(r["detail"])
    return 1 if r["outcome"] in FAILURES else 0


def self_test(limits: Limits, gpu: bool) -> int:
    """Each harness check must come back as its failure, and a worker must still run after."""
    want = {"raise": "FOREIGN", "spin": "HANG", "sleep": "HANG", "abort": "CRASH", "hog": "BLOWUP"}
    cases = [Case(i, mode) for i, mode in enumerate(fuzz_cases.HARNESS_CHECKS)]
    cases.append(fuzz_cases.draw(0, 0, gpu=gpu, budget=limits.budget))
    got = {r.case.mode: r.outcome for r in fuzz_pool.run(cases, limits, workers=2, gpu=gpu)}
    bad = {m: o for m, o in got.items() if m in want and o != want[m]}
    if got.get("extract") in FAILURES:
        bad["extract"] = got["extract"]
    print(f"harness self-test: {got}" + (f"; WRONG: {bad}" if bad else "; all caught"))
    return 1 if bad else 0


def print_report(report: Report, total: int, workers: int, gpu: bool, out=sys.stdout) -> None:
    rate = total / report.seconds if report.seconds else 0.0
    print(f"{total} cases in {report.seconds:.0f} s ({rate:.1f} cases/s), {workers} workers, "
          f"{'Vulkan' if gpu else 'numpy'} path", file=out)
    errors = {k: n for k, n in report.counts.items() if k != "ok" and k not in FAILURES}
    print("outcomes:", file=out)
    for name, n in (("ok", report.counts["ok"]), ("vkncnn.Error", sum(errors.values())),
                    *((k, report.counts[k]) for k in FAILURES)):
        print(f"  {name:<24}{n:>8}", file=out)
    print("vkncnn errors by type:", file=out)
    for name, n in sorted(errors.items(), key=lambda kv: -kv[1]):
        index, message = report.examples.get(name, (None, ""))
        print(f"  {name:<24}{n:>8}   e.g. #{index}: {message[:110]}", file=out)
    print("slowest cases (CPU s): " + "; ".join(f"#{i} {v:.2f} ({o[:50]})" for v, i, o in report.slowest),
          file=out)
    print("largest peak RSS growth: " + "; ".join(f"#{i} {v >> 20} MiB ({o[:50]})" for v, i, o in report.largest),
          file=out)


def _bytes(text: str) -> int:
    units = {"k": 10, "m": 20, "g": 30}
    text = text.strip().lower().removesuffix("ib").removesuffix("b")
    if text and text[-1] in units:
        return int(float(text[:-1]) * (1 << units[text[-1]]))
    return int(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn fuzz", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--cases", type=int, default=100_000, help="number of cases to run (default 100000)")
    ap.add_argument("--seed", type=int, default=0, help="seed: case N of a seed is the same on any machine")
    ap.add_argument("--start", type=int, default=0, help="first case index (to resume or split a run)")
    ap.add_argument("--load-only", action="store_true",
                    help="only load mutated model files (byte-level damage), as the load-time fuzzer did")
    ap.add_argument("--gpu", action="store_true", help="run the nets on the Vulkan path instead of numpy")
    ap.add_argument("--workers", type=int, default=2, help="worker processes running cases (default 2)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="CPU seconds a case may take (default 2.0; 1.0 with --load-only; 10.0 with --gpu, "
                         "where a CPU Vulkan device such as lavapipe compiles and runs every shader)")
    ap.add_argument("--wall-limit", type=float, default=None,
                    help="wall seconds a case may take, to catch hangs that use no CPU (default 30; "
                         "the machine may be shared, so keep it well above --time-limit)")
    ap.add_argument("--memory-budget", type=_bytes, default=64 << 20,
                    help="opt.memory_budget of every net, bytes (suffixes K, M, G; default 64M)")
    ap.add_argument("--memory-margin", type=_bytes, default=None,
                    help="peak RSS growth a case may show beyond the budget (default 4 x budget + 64M: "
                         "the budget bounds each buffer, not a layer's inputs, output and temporaries "
                         "together, nor the weights)")
    ap.add_argument("--save", type=Path, default=None, help="write each failing case (model, inputs, "
                                                             "outcome) under this folder, one subfolder per case")
    ap.add_argument("--case", type=int, default=None, help="replay case N of --seed in this process")
    ap.add_argument("--replay", type=Path, default=None, help="replay a case folder written by --save")
    ap.add_argument("--show", action="store_true", help="with --case/--replay: print the case's .param")
    ap.add_argument("--progress", type=int, default=5000, help="print counts every N cases (0: never)")
    ap.add_argument("--self-test", action="store_true",
                    help="check that the harness reports a foreign exception, a hang, a crash and a blow-up")
    args = ap.parse_args(argv)
    time_limit = args.time_limit or (1.0 if args.load_only else 10.0 if args.gpu else 2.0)
    margin = args.memory_margin if args.memory_margin is not None else 4 * args.memory_budget + (64 << 20)
    limits = Limits(time_limit, args.wall_limit or 30.0, args.memory_budget, margin)
    if args.self_test:
        limits.wall_s = min(limits.wall_s, 5.0)
        return self_test(limits, args.gpu)
    if args.replay is not None:
        return replay(load_saved(args.replay), limits.budget, args.show)
    if args.case is not None:
        case = fuzz_cases.draw(args.seed, args.case, args.gpu, limits.budget, args.load_only)
        return replay(case, limits.budget, args.show)
    cases = cases_for(args.seed, args.cases, args.start, args.gpu, limits.budget, args.load_only)
    report = fuzz(cases, limits, args.workers, args.gpu, args.progress, args.save, args.seed)
    print_report(report, args.cases, args.workers, args.gpu)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
