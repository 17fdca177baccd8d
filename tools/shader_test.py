"""vkncnn-shadertest: run one layer (or a grid of shapes) on numpy and on the GPU, compare.

    vkncnn-shadertest Convolution 0=16 1=3 5=1 6=432 --shape 3,32,32
    vkncnn-shadertest Sigmoid --grid
    vkncnn-shadertest BinaryOp 0=2 --shape 4,5,6 --shape 4,1,1

Shapes are numpy order (c,h,w). Weights are seeded random, sized by the layer
itself. Prints one line per case: error per GPU variant and PASS/FAIL. Exits 1 on any
failure, and when nothing was compared: a case the layer cannot run (params it refuses,
an input it does not take, no GPU) is a failure; with --grid, shapes the layer does not
take are listed as n/a and skipped, and it fails only if it compared none.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

GRID_SHAPES = [(13,), (24,), (7, 9), (12, 5), (3, 9, 11), (4, 8, 8), (12, 7, 5), (16, 3, 3),
               (24, 5, 6), (8, 3, 4, 5)]


def parse_params(tokens: list[str]) -> dict:
    params = {}
    for tok in tokens:
        key, _, value = tok.partition("=")
        if "," in value:
            items = value.split(",")
            params[int(key)] = [float(v) if any(c in v for c in ".eE") else int(v) for v in items]
        elif any(c in value for c in ".eE"):
            params[int(key)] = float(value)
        elif value.lstrip("-").isdigit():
            params[int(key)] = int(value)
        else:
            params[int(key)] = value
    return params


def run_case(type_name: str, params: dict, shapes: list[tuple], n_outputs: int, variants, seed: int):
    from vkncnn.testing import random_layer_weights, test_layer

    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1.2, 1.2, s).astype(np.float32) for s in shapes]
    weights = random_layer_weights(type_name, params, len(inputs), n_outputs, seed)
    return test_layer(type_name, params, weights, inputs, n_outputs, variants=variants)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn shadertest", description=__doc__.split("\n\n")[0])
    ap.add_argument("type", help="ncnn layer type, e.g. Convolution")
    ap.add_argument("params", nargs="*", help="ncnn params as id=value (arrays: id=a,b,c)")
    ap.add_argument("--shape", action="append", default=[], help="input shape c,h,w (repeat per input)")
    ap.add_argument("--grid", action="store_true", help="run over a grid of shapes (dims 1-4)")
    ap.add_argument("--outputs", type=int, default=1, help="number of layer outputs")
    ap.add_argument("--variants", default="fp32-pack1,fp32-pack4,fp16-pack1,fp16-pack4",
                    help="GPU variants to compare with numpy, comma-separated (default: all four)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs and weights")
    args = ap.parse_args(argv)
    params = parse_params(args.params)
    variants = tuple(args.variants.split(","))
    cases = [[s] for s in GRID_SHAPES] if args.grid else [[tuple(int(v) for v in s.split(",")) for s in args.shape]]
    if not cases[0]:
        ap.error("give --shape (once per input) or --grid")
    variants = tuple(v for v in variants if v)
    if not variants:
        ap.error("--variants names no variant")
    failed = compared = skipped = 0
    for shapes in cases:
        try:
            report = run_case(args.type, params, shapes, args.outputs, variants, args.seed)
        except Exception as e:  # the numpy path refuses it too: bad params, or a shape the layer does not take
            print(f"{args.type} {shapes}: n/a ({type(e).__name__}: {' '.join(str(e).split())[:160]})")
            if args.grid:
                skipped += 1
            else:
                failed += 1
            continue
        print(report)
        compared += 1
        failed += not report.ok
    print(f"{len(cases)} case(s), {failed} failed" + (f", {skipped} n/a" if skipped else ""))
    if not compared:
        print(f"{args.type}: nothing was compared", file=sys.stderr)
    return 1 if failed or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
