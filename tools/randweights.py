"""Write a valid, seeded random-weight .bin for any .param.

The .bin format has no index: its layout is whatever each layer's load_model asks
for, in order. So we ask the layers: load the .param with vkncnn, run every
layer's load_model against a recording ModelBin that answers each request with
freshly generated data and remembers it, and write the requests out in ncnn's
format (storage flag word for load type 0, raw fp32 for type 1).

Plain N(0, 1) weights make deep nets blow up or collapse to constants, which
makes any comparison meaningless. Weights are scaled by fan-in (He init) so
activations keep a healthy spread through dozens of layers; normalisation
statistics get positive variances, biases stay small.

    python -m vkncnn.tools.randweights model.param model.bin [--seed 0]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from vkncnn.format.modelbin import ModelBin

FLAG_FP32 = b"\0\0\0\0"

# Layers whose first load is the weight matrix, with the param id of their output count.
_WEIGHTED = {"Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise",
             "Convolution1D", "InnerProduct", "Convolution3D", "ConvolutionDepthWise3D",
             "Deconvolution1D", "Deconvolution3D", "ConvolutionDepthWise1D", "DeconvolutionDepthWise1D"}


class RecordingModelBin(ModelBin):
    """Answers every load with generated data and keeps (bytes-to-write) in order."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.chunks: list[bytes] = []
        self.layer = None
        self.ordinal = 0
        self.layer_name = None

    def start_layer(self, layer) -> None:
        self.layer = layer
        self.ordinal = 0

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        data = self._generate(n).astype(np.float32)
        self.chunks.append((FLAG_FP32 if type_ == 0 else b"") + data.astype("<f4").tobytes())
        self.ordinal += 1
        return data

    def _generate(self, n: int) -> np.ndarray:
        layer, k, rng = self.layer, self.ordinal, self.rng
        kind = layer.type if layer is not None else ""
        if kind in _WEIGHTED and k == 0:
            # He init: each output sums fan_in = (inc/group)*kernel taps products
            outc = max(1, int(getattr(layer, "num_output", 1) or 1))
            return rng.normal(0.0, np.sqrt(2.0 / max(1, n // outc)), n)
        if kind == "BatchNorm":  # slope, mean, var, bias
            return [rng.uniform(0.5, 1.5, n), rng.uniform(-0.1, 0.1, n),
                    rng.uniform(0.5, 1.5, n), rng.uniform(-0.1, 0.1, n)][min(k, 3)]
        if kind in ("Gemm", "MultiHeadAttention", "MatMul") and n > 64:
            dim = int(np.sqrt(n)) if kind == "MultiHeadAttention" else _gemm_fan_in(layer, n)
            return rng.normal(0.0, np.sqrt(1.0 / max(1, dim)), n)
        if kind in ("LayerNorm", "GroupNorm", "InstanceNorm", "RMSNorm", "Normalize", "Scale"):
            return rng.uniform(0.5, 1.5, n) if k % 2 == 0 else rng.uniform(-0.1, 0.1, n)
        if kind == "PReLU":
            return rng.uniform(0.0, 0.3, n)
        if kind == "MemoryData":
            return rng.uniform(-0.5, 0.5, n)
        return rng.uniform(-0.1, 0.1, n)  # biases and anything else small


def _gemm_fan_in(layer, n: int) -> int:
    k = int(getattr(layer, "constantK", 0) or getattr(layer, "K", 0) or 0)
    if k > 0:
        return k
    return int(np.sqrt(n))


def random_weights(param_path: str, seed: int = 0) -> bytes:
    """The bytes of a .bin for `param_path`, deterministic for a given seed."""
    import vkncnn

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    if param_path.endswith(".bin"):
        net.load_param_bin(param_path)
    else:
        net.load_param(param_path)
    mb = RecordingModelBin(seed)
    for layer in net.layers():
        mb.start_layer(layer)
        mb.layer_name = layer.name
        layer.load_model(mb)
    return b"".join(mb.chunks)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("param")
    ap.add_argument("bin")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    data = random_weights(args.param, args.seed)
    with open(args.bin, "wb") as f:
        f.write(data)
    print(f"wrote {len(data)} bytes of seeded random weights to {args.bin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
