"""vkncnn profile: where a model's inference time goes, layer by layer.

    vkncnn profile model.param [model.bin] [--shape data=3,224,224] [--cpu|--gpu] [--fp32]
                   [--loops 10] [--warmup-s 1] [-o report.html] [--trace trace.json] [--json]

Prints the layers that take the most time (median over --loops inferences, after
warming up) with their share of the total, type, name and output shape. `-o` writes one
self-contained HTML report (bar charts, no script); `--trace` writes Chrome trace events
for chrome://tracing or ui.perfetto.dev; `--json` prints every layer's times instead of
the table. On the numpy path layers are timed on the wall clock; on the GPU path with
device timestamps, per shader dispatch (tools/layer_profile.py). Without a .bin the
model gets seeded random weights, as `vkncnn info` and `vkncnn bench`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .bench import add_runner_arguments
from .cmd_common import CommandError, parse_shape
from .layer_profile import Profile, profile_model
from .model_source import resolve_model
from .profile_html import render_html
from .profile_trace import trace_events


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("param", metavar="MODEL.param",
                    help="the model's .param (text, or binary .param.bin), or a benchmark model's name")
    ap.add_argument("bin", metavar="MODEL.bin", nargs="?",
                    help="its weights (default: seeded random weights that fit the .param)")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape, metavar="NAME=DIMS",
                    help="an input's shape in numpy order, NAME=3,224,224 or NAME=3x224x224 (repeat per input; "
                         "NAME= may be left out for a model with one input); default: the .param's hints")
    add_runner_arguments(ap)
    ap.add_argument("--loops", type=int, default=10, metavar="N",
                    help="timed inferences; each layer's time is its median (default 10)")
    ap.add_argument("--warmup-s", type=float, metavar="S",
                    help="untimed inferences for at least S seconds first, one at least (default: 1 on the GPU, "
                         "whose first inference records its plans and whose clock ramps up; 0 on the CPU)")
    ap.add_argument("--top", type=int, default=20, metavar="K", help="layers in the table (default 20; 0: all)")
    ap.add_argument("-o", "--output", metavar="REPORT.html", help="write a self-contained HTML report")
    ap.add_argument("--trace", metavar="TRACE.json",
                    help="write Chrome trace events (open in chrome://tracing or ui.perfetto.dev)")
    ap.add_argument("--json", action="store_true", help="print the per-layer times as one JSON object")


def format_table(profile: Profile, top: int = 20) -> str:
    """The layers that take the most time, then the totals and the time per type."""
    total = profile.layers_total_us or 1.0
    ranked = sorted(profile.layers, key=lambda layer: -layer.median_us)
    shown = ranked if top <= 0 else ranked[:top]
    path = {"cpu": "numpy path", "gpu": "Vulkan path"}[profile.path]
    lines = [f"{profile.model} on {profile.device} ({path}, {profile.precision}), {profile.date}",
             f"layer times: {profile.clock}, median of {profile.loops} inferences "
             f"after {profile.warmup_runs} warm-up", ""]
    head = ("ms", "share", "type", "name", "output shape")
    rows = [(f"{layer.median_us / 1e3:.3f}", f"{100 * layer.median_us / total:.1f}%", layer.type,
             layer.name + (f" ({layer.note()})" if layer.note() else ""),
             " ".join("x".join(map(str, s)) for s in layer.shapes if s) or "-") for layer in shown]
    widths = [max([len(h)] + [min(48, len(row[i])) for row in rows]) for i, h in enumerate(head)]

    def line(cells) -> str:
        return "  ".join(c.rjust(w) if i < 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    lines += [line(head).rstrip()] + [line(row).rstrip() for row in rows]
    if len(shown) < len(ranked):
        rest = sum(layer.median_us for layer in ranked[len(shown):])
        lines.append(f"... {len(ranked) - len(shown)} more layers, {rest / 1e3:.3f} ms ({100 * rest / total:.1f}%)")
    lines.append(f"\n{len(profile.layers)} layers: {profile.layers_total_us / 1e3:.3f} ms summed; "
                 f"inference {profile.run_median_us / 1e3:.3f} ms (median wall time)")
    lines.append("by type: " + ", ".join(f"{kind} {us / 1e3:.3f} ms ({100 * us / total:.0f}%)"
                                         for kind, _, us in profile.by_type()))
    return "\n".join(lines)


def _write(path: str, text: str, what: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise CommandError(f"{what} {path} is a folder: give a file name")
    target.write_text(text, encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.loops < 1:
        raise CommandError(f"--loops must be at least 1, got {args.loops}")
    source = resolve_model(args.param, args.shape, args.bin)
    warmup_s = args.warmup_s if args.warmup_s is not None else (1.0 if args.gpu else 0.0)
    profile = profile_model(source, gpu=args.gpu, fp16=args.fp16, loops=args.loops, warmup_s=warmup_s,
                            device=args.device, threads=args.threads, fp16_arithmetic=args.fp16_arithmetic)
    if args.output:
        _write(args.output, render_html(profile), "report")
    if args.trace:
        _write(args.trace, json.dumps(trace_events(profile)), "trace")
    print(json.dumps(profile.to_json()) if args.json else format_table(profile, args.top))
    return 0
