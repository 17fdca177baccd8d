"""vkncnn-shadertest: run one layer (or a grid of shapes) on numpy and on the GPU, compare.

    vkncnn-shadertest Convolution 0=16 1=3 5=1 6=432 --shape 3,32,32
    vkncnn-shadertest Convolution 0=16 1=3 5=1 --shape 3x32x32 --time
    vkncnn-shadertest Sigmoid --grid
    vkncnn-shadertest BinaryOp 0=2 --shape 4,5,6 --shape 4,1,1

Shapes are numpy order (c,h,w), written 3,32,32 or 3x32x32. Weights are seeded random,
sized by the layer itself; a weight size the params leave out (Convolution's 6=,
InnerProduct's 2=, BatchNorm's 0=, ...) is filled in from the first input's shape and
printed. Prints one line per case: error per GPU variant and PASS/FAIL; with --time,
the GPU time of each of the layer's dispatches per variant (GPU timestamps, median of
--runs inferences). Exits 1 on any failure, and when nothing was compared: a case the
layer cannot run (params it refuses, an input it does not take, no GPU) is a failure;
with --grid, shapes the layer does not take are listed as n/a and skipped, and it fails
only if it compared none.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys

import numpy as np

from .shader_test_params import fill_weight_sizes

IO_CASTS = ("upload_cast", "download_cast")  # shaders/upload_cast.comp, download_cast.comp
VARIANTS = ("fp32-pack1", "fp32-pack4", "fp16-pack1", "fp16-pack4")
# fp16 storage with fp16 arithmetic: asked for by name (--variants fp16a-pack4)
EXTRA_VARIANTS = ("fp16a-pack1", "fp16a-pack4")
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


def parse_shape(text: str) -> tuple:
    """'3,32,32' or '3x32x32' -> (3, 32, 32)."""
    parts = re.split(r"\s*[,xX]\s*", text.strip())
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: expected 1 to 4 sizes such as 3,32,32 or 3x32x32")
    return tuple(int(p) for p in parts)


def case_inputs(shapes: list[tuple], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.2, 1.2, s).astype(np.float32) for s in shapes]


def run_case(type_name: str, params: dict, shapes: list[tuple], n_outputs: int, variants, seed: int):
    from vkncnn.testing import random_layer_weights, test_layer

    inputs = case_inputs(shapes, seed)
    weights = random_layer_weights(type_name, params, len(inputs), n_outputs, seed)
    return test_layer(type_name, params, weights, inputs, n_outputs, variants=variants)


def time_case(type_name: str, params: dict, shapes: list[tuple], n_outputs: int, variants, seed: int,
              runs: int) -> list[str]:
    """One line per variant: the median GPU time of each of the layer's dispatches."""
    from vkncnn.testing import random_layer_weights, time_layer

    inputs = case_inputs(shapes, seed)
    weights = random_layer_weights(type_name, params, len(inputs), n_outputs, seed)
    lines = []
    for variant in variants:
        precision, pack = variant.split("-")
        times = time_layer(type_name, params, weights, inputs, n_outputs, fp16=precision in ("fp16", "fp16a"),
                           fp16_arithmetic=precision == "fp16a",
                           packing=pack == "pack4", runs=runs)
        medians = {shader: statistics.median(us) for shader, us in times.items()}
        # fp16 storage adds the plan's casts of the fp32 input and output: shown apart from the layer's own
        casts = sum(us for shader, us in medians.items() if shader in IO_CASTS)
        cells = [f"{shader} {us:.1f} us" for shader, us in medians.items() if shader not in IO_CASTS]
        if not cells:
            lines.append(f"  {variant}: no GPU dispatch (the layer ran on the host)")
            continue
        total = sum(us for shader, us in medians.items() if shader not in IO_CASTS)
        line = f"  {variant}: {', '.join(cells)}; layer {total:.1f} us per run (GPU, median of {runs})"
        lines.append(line + (f"; input/output casts {casts:.1f} us" if casts else ""))
    return lines


def _oneline(e: Exception) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn shadertest", description=__doc__.split("\n\n")[0])
    ap.add_argument("type", help="ncnn layer type, e.g. Convolution")
    ap.add_argument("params", nargs="*", help="ncnn params as id=value (arrays: id=a,b,c)")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape,
                    help="input shape c,h,w or cxhxw (repeat per input)")
    ap.add_argument("--grid", action="store_true", help="run over a grid of shapes (dims 1-4)")
    ap.add_argument("--outputs", type=int, default=1, help="number of layer outputs")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="GPU variants to compare with numpy, comma-separated (default: the four fp32/fp16 "
                         "storage ones; fp16a-pack1, fp16a-pack4: fp16 arithmetic too)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs and weights")
    ap.add_argument("--time", action="store_true", help="also time the layer's dispatches on the GPU, per variant")
    ap.add_argument("--runs", type=int, default=20, help="inferences timed per variant with --time (default 20)")
    args = ap.parse_args(argv)
    params = parse_params(args.params)
    cases = [[s] for s in GRID_SHAPES] if args.grid else [args.shape]
    if not cases[0]:
        ap.error("give --shape (once per input) or --grid")
    variants = tuple(v for v in args.variants.split(",") if v)
    if not variants:
        ap.error("--variants names no variant")
    unknown = [v for v in variants if v not in VARIANTS + EXTRA_VARIANTS]
    if unknown:
        ap.error(f"--variants: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS + EXTRA_VARIANTS)})")
    if args.runs < 1:
        ap.error(f"--runs must be at least 1, got {args.runs}")
    failed = compared = skipped = 0
    for shapes in cases:
        case_params, filled = fill_weight_sizes(args.type, params, shapes)
        if filled:
            sizes = " ".join(f"{k}={v}" for k, v in filled.items())
            print(f"{args.type} {shapes}: weight size {sizes} filled in from the input shape")
        try:
            report = run_case(args.type, case_params, shapes, args.outputs, variants, args.seed)
        except Exception as e:  # the numpy path refuses it too: bad params, or a shape the layer does not take
            print(f"{args.type} {shapes}: n/a ({_oneline(e)})")
            if args.grid:
                skipped += 1
            else:
                failed += 1
            continue
        print(report)
        compared += 1
        failed += not report.ok
        if args.time and not report.ok:
            print("  not timed: the comparison failed")
        elif args.time:
            try:
                print("\n".join(time_case(args.type, case_params, shapes, args.outputs, variants, args.seed,
                                          args.runs)))
            except Exception as e:  # the same runs compared fine: a failure here is the timer's, reported
                print(f"  timing failed: {_oneline(e)}")
                failed += 1
    print(f"{len(cases)} case(s), {failed} failed" + (f", {skipped} n/a" if skipped else ""))
    if not compared:
        print(f"{args.type}: nothing was compared", file=sys.stderr)
    return 1 if failed or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
