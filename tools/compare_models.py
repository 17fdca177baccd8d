"""Compare every benchmark model, or any .param, across runtimes: real ncnn (CPU, fp32) is the reference.

    vkncnn compare [--models a,b] [--gpu] [--fp16a] [--json out.json]
    vkncnn compare --models my.param --shape data=3,224,224

Each model gets seeded random weights (tools/randweights) and a seeded input. A model is
a benchmark name or a .param path; a path takes its input shapes from --shape or from
its .param's hints (tools/model_source.py).
Columns: max relative error (max |a-b| / max(1, max |ref|)) over all outputs of
vkncnn's numpy path, and with --gpu of vkncnn's Vulkan path in fp32 and fp16
storage (fp32 arithmetic). Real ncnn runs with its fp16/bf16 options off.
--fp16a adds vkncnn's Vulkan path with fp16 storage and fp16 arithmetic (gpu_fp16a) and real
ncnn's own Vulkan path with the same options (ncnn_fp16a), both against the same reference:
the error fp16 arithmetic is held to (docs/gpu.md). Softmax outputs are judged on their
logits, detection models on the tensors entering the detection layer (as the tests do).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

import numpy as np

from .benchmark_models import INPUT_SHAPES
from .cmd_common import CommandError, parse_shape
from .model_source import ModelSource, resolve_model
from .ncnn_oracle import run_ncnn, run_ncnn_vulkan


def with_detections(text: str) -> str:
    """SSD DetectionOutput's threshold lowered to 0.04: random weights score ~1/num_class."""
    return "\n".join(re.sub(r" 4=\S+", " 4=0.04", line) if line.startswith("DetectionOutput") else line
                     for line in text.splitlines()) + "\n"


DETECTION_LAYERS = {"DetectionOutput", "YoloDetectionOutput", "Yolov3DetectionOutput"}


def detection_head_inputs(text: str) -> tuple[list[str], list[str]]:
    """The blobs entering and leaving a model's detection layers (empty for other models).

    Thresholds and NMS turn a last-bit difference in a score near a threshold into a
    different list of boxes; the tensors before them show how close two runtimes are.
    """
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    blobs = net.blobs()
    heads = [layer for layer in net.layers() if layer.type in DETECTION_LAYERS]
    return ([blobs[b].name for layer in heads for b in layer.bottoms],
            [blobs[t].name for layer in heads for t in layer.tops])


def softmax_logits(text: str) -> list[str]:
    """The inputs of Softmax layers that produce a net output (the logits).

    Probabilities hide differences (and ViT's exported softmax runs over a 1-long axis,
    so its output is all ones whatever came before); the logits show them.
    """
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    blobs, outputs = net.blobs(), set(net.output_indexes())
    return [blobs[layer.bottoms[0]].name for layer in net.layers()
            if layer.type == "Softmax" and any(t in outputs for t in layer.tops)]


def output_err(got: np.ndarray, want: np.ndarray) -> float:
    """Relative error of one output; detection lists (N, 6) are compared as sets of boxes.

    Detections whose scores differ in the last bits may swap places between runtimes,
    so both lists are put in one order by (label, x1, y1, x2, y2) before comparing.
    """
    from vkncnn.testing import rel_err

    if got.shape == want.shape and got.ndim == 2 and got.shape[-1] == 6:
        def order(a):
            return a[np.lexsort((a[:, 5], a[:, 4], a[:, 3], a[:, 2], a[:, 0]))]
        return rel_err(order(got), order(want))
    return rel_err(got, want)


def run_vkncnn(text: str, weights: bytes, inputs: dict, outputs: list, gpu: bool, fp16: bool,
               fp16_arithmetic: bool = False) -> dict:
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = fp16 and fp16_arithmetic
    net.load_param_mem(text)
    if gpu and net.gpu is None:
        raise RuntimeError("no Vulkan device")
    net.load_model(weights)
    return net.run(inputs, outputs)


def compare_model(source: ModelSource, gpu: bool, fp16a: bool = False) -> dict:
    import vkncnn

    if str(source.param).endswith(".bin"):
        raise CommandError(f"{source.label}: compare reads a text .param, not a binary .param.bin")
    text = with_detections(source.param.read_text())
    weights = source.weights(seed=0)
    probe = vkncnn.Net()
    probe.opt.use_vulkan_compute = False
    probe.load_param_mem(text)
    inputs = source.random_inputs(seed=1)
    outputs = probe.output_names()
    heads, head_outputs = detection_head_inputs(text)
    logits = softmax_logits(text)
    ref = run_ncnn(text, weights, inputs, outputs + heads + logits)
    row = {"model": source.label}
    variants = [("cpu", False, False, False)]
    if gpu:
        variants += [("gpu_fp32", True, False, False), ("gpu_fp16", True, True, False)]
    if fp16a:
        variants += [("gpu_fp16a", True, True, True), ("ncnn_fp16a", None, True, True)]
    for label, on_gpu, fp16, arith in variants:
        t0 = time.perf_counter()
        try:
            if on_gpu is None:  # real ncnn's own Vulkan path
                got = run_ncnn_vulkan(text, weights, inputs, outputs + heads + logits, fp16_arithmetic=arith)
            else:
                got = run_vkncnn(text, weights, inputs, outputs + heads + logits, on_gpu, fp16, arith)
            # fp16 arithmetic: the logits, not the probabilities, and the detection layer's inputs,
            # not its thresholded boxes (as tests/models judge fp16)
            judged = outputs if not arith else [o for o in outputs if o not in head_outputs] + logits + heads
            row[label] = max(output_err(got[o], ref[o]) for o in judged)
            if heads:
                row[label + "_heads"] = max(output_err(got[o], ref[o]) for o in heads)
        except Exception as e:
            row[label] = f"{type(e).__name__}: {e}"[:100]
        row[label + "_s"] = time.perf_counter() - t0
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(INPUT_SHAPES),
                    help="comma-separated benchmark names or .param paths (default: every benchmark model)")
    ap.add_argument("--shape", action="append", default=[], type=parse_shape, metavar="NAME=DIMS",
                    help="an input's shape in numpy order, NAME=3,224,224 (repeat per input); default: "
                         "benchncnn's for benchmark models, the .param's hints for others")
    ap.add_argument("--gpu", action="store_true", help="also the Vulkan path, fp32 and fp16 storage")
    ap.add_argument("--fp16a", action="store_true",
                    help="also the Vulkan path with fp16 arithmetic, vkncnn's and real ncnn's")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    sources = [resolve_model(name, args.shape) for name in args.models.split(",") if name]
    width = max(20, *(len(s.label) + 2 for s in sources))
    rows = []
    labels = (["cpu"] + (["gpu_fp32", "gpu_fp16"] if args.gpu else [])
              + (["gpu_fp16a", "ncnn_fp16a"] if args.fp16a else []))
    print(f"{'model':<{width}}" + "".join(f"{k:>11}" for k in labels)
          + "   (detection models: final output / detection-head inputs)")
    for source in sources:
        name = source.label
        row = compare_model(source, args.gpu, args.fp16a)
        rows.append(row)
        cells = []
        for k in labels:
            c, h = row.get(k), row.get(k + "_heads")
            cells.append(f"{c:>11.2e}" if isinstance(c, float) else f"  {c}")
            if h is not None:
                cells[-1] += f"/{h:.1e}"
        print(f"{name:<{width}}" + "".join(cells), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    bad = [r["model"] for r in rows if not all(isinstance(v, float) for k, v in r.items() if k != "model")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
