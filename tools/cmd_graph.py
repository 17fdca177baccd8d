"""vkncnn graph: a model's layer graph, top to bottom, as SVG or Graphviz DOT.

    vkncnn graph model.param -o graph.svg [--shape data=3,224,224]
    vkncnn graph model.param -o graph.dot --format dot      (then: dot -Tpng graph.dot -o graph.png)

Layers are boxes with their type and name; blobs are edges from producer to each
consumer, labelled with the blob's name and, with --shape, the shape it has for that
input (found by one numpy run on zeros, seeded random weights unless a .bin is given).
The SVG is laid out here (tools/graph_layout.py): no Graphviz needed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cmd_common import CommandError, existing_file, parse_shape
from .graph_render import graph_of, render_dot, render_svg
from .model_source import find_param, resolve_model
from .model_summary import infer_shapes, load_param

FORMATS = {"svg": render_svg, "dot": render_dot}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("param", metavar="MODEL.param",
                    help="the model's .param (text, or binary .param.bin), or a benchmark model's name")
    ap.add_argument("bin", metavar="MODEL.bin", nargs="?",
                    help="its weights, used only to find shapes with --shape (default: seeded random weights)")
    ap.add_argument("-o", "--output", metavar="GRAPH.svg",
                    help="where to write the graph (default: standard output)")
    ap.add_argument("--format", choices=sorted(FORMATS),
                    help="svg (laid out here) or dot (Graphviz text); default: from the -o suffix "
                         "(.dot and .gv give dot), else svg")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape, metavar="NAME=DIMS",
                    help="an input's shape in numpy order, NAME=3,224,224 (repeat per input; NAME= may be left "
                         "out for a model with one input): label every blob with its shape")


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    suffix = Path(args.output).suffix.lower() if args.output else ""
    return "dot" if suffix in (".dot", ".gv") else "svg"


def _model_name(label: str) -> str:
    """squeezenet for models/squeezenet.param (or .param.bin)."""
    name = Path(label).name
    for suffix in (".param.bin", ".param"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def run(args: argparse.Namespace) -> int:
    label, param = find_param(args.param)
    if args.bin:
        existing_file(args.bin, "weights")
    net = load_param(param)
    shapes = None
    if args.shape:
        source = resolve_model(args.param, args.shape, args.bin)
        net.load_model(source.weights())
        shapes = infer_shapes(net, source.shapes)
    text = FORMATS[_format(args)](graph_of(net, shapes, name=_model_name(label)))
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return 0
    target = Path(args.output)
    if target.is_dir():
        raise CommandError(f"output {args.output} is a folder: give a file name")
    target.write_text(text, encoding="utf-8")
    print(f"{target}: {len(net.layers())} layers ({_format(args)})")
    return 0
