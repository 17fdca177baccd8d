"""Write a valid, seeded random-weight .bin for any .param.

The .bin format has no index: its layout is whatever each layer's load_model asks
for, in order. So we ask the layers: load the .param with vkncnn, run every
layer's load_model against a recording ModelBin (vkncnn/format/recording_modelbin.py)
that answers each request with freshly generated data and remembers it, and write
the requests out in ncnn's format (storage flag word for load type 0, raw fp32 for
type 1).

Plain N(0, 1) weights make deep nets blow up or collapse to constants, which
makes any comparison meaningless. Weights start scaled by fan-in (He init),
normalisation statistics get positive variances, biases stay small. Given an
input shape, a second pass (LSUV-style) then runs the net once on a seeded input
and rescales each linear layer (convolutions, InnerProduct, Gemm, the attention
output projection) so that its output has unit spread: linear bottlenecks and
residual sums no longer compound into overflow, and exp-based heads (YOLO boxes)
see sensible values.

    python -m vkncnn.tools.randweights model.param model.bin [--seed 0]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from vkncnn.format.modelbin import ModelBin
from vkncnn.format.recording_modelbin import WEIGHTED, RecordingModelBin


class _Replay(ModelBin):
    """Serves one layer's (possibly rescaled) loads again, in the same order."""

    def __init__(self, loads: list) -> None:
        self._loads = iter(loads)

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        return next(self._loads)[0]


def _scalable_loads(layer, loads: list) -> list:
    """The loads to divide by s so the layer's output divides by s (empty: leave it)."""
    if getattr(layer, "int8_scale_term", 0) or not loads:
        return []
    if layer.type in WEIGHTED or layer.type == "InnerProduct":
        return loads[:2] if getattr(layer, "bias_term", 0) else loads[:1]
    if layer.type == "Gemm" and not getattr(layer, "constantA", 0):
        return loads  # B and C: y = alpha * A B + beta * C
    if layer.type == "MultiHeadAttention":
        return loads[-2:]  # the output projection's weight and bias
    return []


def normalize_activations(net, rec: RecordingModelBin, inputs: dict) -> None:
    """Run the net once, layer by layer, rescaling linear layers to unit output spread."""
    from vkncnn.option import Option

    opt = Option()
    opt.use_vulkan_compute = False
    blobs = {net.find_blob_index_by_name(k): np.asarray(v, np.float32) for k, v in inputs.items()}
    for layer, loads in zip(net.layers(), rec.loads):
        if layer.type == "Input" or any(b not in blobs for b in layer.bottoms):
            continue
        bottoms = [blobs[b] for b in layer.bottoms]
        try:
            tops = layer.forward_cpu(bottoms, opt)
        except Exception:  # a layer this input cannot feed: leave the rest as generated
            return
        scaled = _scalable_loads(layer, loads)
        if scaled and tops and tops[0].size > 1 and tops[0].dtype.kind == "f":
            spread = float(np.std(tops[0], dtype=np.float64))
            if np.isfinite(spread) and spread > 1e-12:
                for item in scaled:
                    item[0] = (item[0] / np.float32(spread)).astype(np.float32)
                layer.load_model(_Replay(loads))
                layer.create_pipeline(opt)
                tops = layer.forward_cpu(bottoms, opt)
        for b, t in zip(layer.tops, tops):
            blobs[b] = t


def random_weights(param_path: str, seed: int = 0, input_shapes: dict | None = None) -> bytes:
    """The bytes of a .bin for `param_path`, deterministic for a given seed.

    `input_shapes` ({input name: numpy shape}, or one shape for every input) enables the
    activation-normalising pass on a seeded uniform(-1, 1) input.
    """
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    if param_path.endswith(".bin"):
        net.load_param_bin(param_path)
    else:
        net.load_param(param_path)
    rec = RecordingModelBin(seed)
    for layer in net.layers():
        rec.start_layer(layer)
        rec.layer_name = layer.name
        layer.load_model(rec)
    if input_shapes is not None:
        if not isinstance(input_shapes, dict):
            input_shapes = {name: input_shapes for name in net.input_names()}
        rng = np.random.default_rng(seed + 1)
        inputs = {k: rng.uniform(-1, 1, shape).astype(np.float32) for k, shape in input_shapes.items()}
        normalize_activations(net, rec, inputs)
    return b"".join(rec.chunks)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkncnn randweights", description=__doc__.split("\n\n")[0])
    ap.add_argument("param", metavar="MODEL.param", help="the model whose layers say what weights they need")
    ap.add_argument("bin", metavar="MODEL.bin", help="the .bin to write")
    ap.add_argument("--seed", type=int, default=0, help="the same seed writes the same bytes")
    ap.add_argument("--shape", help="input shape c,h,w: rescale layers so activations keep unit spread")
    args = ap.parse_args(argv)
    shape = tuple(int(v) for v in args.shape.split(",")) if args.shape else None
    data = random_weights(args.param, args.seed, shape)
    with open(args.bin, "wb") as f:
        f.write(data)
    print(f"wrote {len(data)} bytes of seeded random weights to {args.bin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
