"""Timing two runtimes under the same machine state: interleaved blocks of inferences."""

from __future__ import annotations

import time


def time_interleaved(runners, x, loops: int, block: int, settle_s: float, rewarm_s: float = 0.0) -> dict:
    """Milliseconds per inference for each runner: `block` loops of one, then of the next...

    Interleaving keeps both runtimes under the same machine state (speeds move a lot
    between runs on shared machines). How finely depends on the device:
    - CPU: in blocks, each after `settle_s` of quiet. A runtime's idle worker threads keep
      spinning for a while after it returns (OpenMP's, and numpy's OpenBLAS), stealing
      cores from whoever runs next; after a short pause ncnn's own times on 2 cores were
      far above the settled ones.
    - GPU: in blocks of 10, no pause. An idle GPU drops its clock within milliseconds, so
      with pauses both runtimes measured far slower than back to back. Keeping the GPU
      busy measures both at full clock. Not loop by loop: the GPU switching between the
      two runtimes' devices (contexts) costs the first inference after a switch some time,
      whoever runs it, a cost neither runtime has when it runs alone. In blocks of 10 only
      the first of each block pays it, and the medians are each runtime's own speed.
      `--block 1` gives the loop-by-loop figures.
    - With `rewarm_s`, each block starts after untimed inferences of its runner (one at
      least, and more until `rewarm_s` have passed): where one runtime's steps leave the GPU
      mostly idle (real ncnn's LLM decode steps, whose caches cross through the host), its
      clock drops, and the other's next block would start on a slow clock. The re-warm also
      takes the switch between the runtimes' devices off the timed inferences.
    Figures for each: docs/perf-notes.md, "Benchmark method: interleaving, quiet time, GPU
    blocks".
    """
    times: dict[str, list[float]] = {r.name: [] for r in runners}
    done = 0
    while done < loops:
        n = min(block, loops - done)
        for r in runners:
            time.sleep(settle_s)
            if rewarm_s > 0:
                warm_up([r], x, 1, rewarm_s)
            for _ in range(n):
                t0 = time.perf_counter()
                r.infer(x)
                times[r.name].append((time.perf_counter() - t0) * 1e3)
        done += n
    return times


def warm_up(runners, x, loops: int, seconds: float) -> int:
    """Untimed inferences of every runner in turn: `loops` rounds, and more until `seconds`
    have passed (a GPU's clock ramps up under load). Returns the rounds run."""
    until, done = time.perf_counter() + seconds, 0
    while done < loops or time.perf_counter() < until:
        for r in runners:
            r.infer(x)
        done += 1
    return done


def set_timing_defaults(args) -> None:
    """Fill in the interleaving options left unset, by device (figures: docs/perf-notes.md,
    "Benchmark method: interleaving, quiet time, GPU blocks")."""
    gpu = bool(args.gpu)
    if args.block is None:
        args.block = 10 if gpu else 5
    if args.warmup_s is None:
        # an idle GPU runs at a fraction of its clock: dozens of millisecond-long steps end
        # before it has ramped up
        args.warmup_s = 2.0 if gpu else 0.0
    if args.settle_ms is None:
        args.settle_ms = 0.0 if gpu else 300.0
    if args.rewarm_ms is None:
        # the GPU's clock sinks while a runtime leaves it mostly idle (real ncnn's LLM decode
        # steps): each block starts after 300 ms of its own runtime's load
        args.rewarm_ms = 300.0 if gpu else 0.0


TIMING_OPTIONS = ("block", "warmup_s", "settle_ms", "rewarm_ms")


def timing_settings(args) -> dict:
    """The interleaving options a run used, for its JSON results (set_timing_defaults first)."""
    return {name: getattr(args, name) for name in TIMING_OPTIONS}
