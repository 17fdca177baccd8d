"""vkncnn info: a model's inputs, outputs and every layer's shape, FLOPs, weights and device.

    vkncnn info model.param [model.bin] [--shape data=3,224,224] [--json]

Without a .bin the layers get seeded random weights: shapes, FLOPs and weight counts do
not depend on the values. The FLOPs convention is tools/model_summary.py's.
"""

from __future__ import annotations

import argparse
import json

from .cmd_common import existing_file, human, parse_shape
from .model_summary import ModelSummary, summarize


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("param", metavar="MODEL.param", help="the model's .param (text, or binary .param.bin)")
    ap.add_argument("bin", metavar="MODEL.bin", nargs="?",
                    help="its weights (default: seeded random weights that fit the .param)")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape, metavar="NAME=DIMS",
                    help="an input's shape in numpy order, NAME=3,224,224 or NAME=3x224x224 (repeat per input; "
                         "NAME= may be left out for a model with one input); default: the .param's hints")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _dims(shape: list[int]) -> str:
    return "x".join(map(str, shape)) if shape else "-"


def format_table(summary: ModelSummary) -> str:
    """The text report: inputs, outputs, one row per layer, totals. Blob names can be long,
    so the bottoms -> tops column comes last, where it never pushes the others out of line."""
    lines = ["inputs:"] + [f"  {i['name']:<20} {_dims(i['shape'])}" for i in summary.inputs]
    lines += ["outputs:"] + [f"  {o['name']:<20} {_dims(o['shape'])}" for o in summary.outputs]
    head = ("name", "type", "shape", "FLOPs", "params", "runs on", "bottoms -> tops")
    rows = [(r.name, r.type, " ".join(_dims(s) for s in r.shapes), human(r.flops), human(r.params), r.runs_on,
             f"{','.join(r.bottoms) or '-'} -> {','.join(r.tops)}") for r in summary.layers]
    widths = [max([len(h)] + [min(40, len(row[i])) for row in rows]) for i, h in enumerate(head)]
    right = {3, 4}  # numbers line up on the right

    def line(cells) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    lines += ["", line(head).rstrip()] + [line(row).rstrip() for row in rows]
    on_gpu = sum(r.runs_on == "gpu" for r in summary.layers)
    lines.append(f"\n{len(summary.layers)} layers ({on_gpu} with a GPU shader), {human(summary.flops)} FLOPs "
                 f"({summary.flops}), {human(summary.params)} params ({summary.params})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    param = existing_file(args.param, "model")
    bin_path = existing_file(args.bin, "weights") if args.bin else None
    summary = summarize(param, bin_path, args.shape)
    print(json.dumps(summary.to_json()) if args.json else format_table(summary))
    return 0
