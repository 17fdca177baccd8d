"""Write a valid, seeded random-weight .bin for any .param.

The .bin format has no index: its layout is whatever each layer's load_model asks
for, in order. So we ask the layers: load the .param with vkncnn, run every
layer's load_model against a recording ModelBin that answers each request with
freshly generated data and remembers it, and write the requests out in ncnn's
format (storage flag word for load type 0, raw fp32 for type 1).

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

FLAG_FP32 = b"\0\0\0\0"

# Layers whose first load is the weight matrix, with the param id of their output count.
_WEIGHTED = {"Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise",
             "Convolution1D", "InnerProduct", "Convolution3D", "ConvolutionDepthWise3D",
             "Deconvolution1D", "Deconvolution3D", "ConvolutionDepthWise1D", "DeconvolutionDepthWise1D",
             "DeconvolutionDepthWise3D", "DeformableConv2D"}


_RECURRENT = {"RNN", "GRU", "LSTM"}


# Quantize / Dequantize / Requantize: a value per load (then biases): float -> int8 maps
# +-4 to +-127, int32 accumulators of that size map back near unit range.
_QUANT_SCALES = {"Quantize": (127.0 / 4.0,), "Dequantize": (4.0 / 127.0,),
                 "Requantize": (4.0 / 127.0, 127.0 / 4.0)}


class RecordingModelBin(ModelBin):
    """Answers every load with generated data and remembers it, layer by layer."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.loads: list[list] = []  # per layer: [array, load type] in request order
        self.layer = None
        self.ordinal = 0
        self.layer_name = None

    def start_layer(self, layer) -> None:
        self.layer = layer
        self.ordinal = 0
        self.loads.append([])

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        data = np.asarray(self._generate(n), dtype=np.float32)
        if self.ordinal == 0:
            self.first = data
        self.loads[-1].append([data, type_])
        self.ordinal += 1
        return data

    @property
    def chunks(self) -> list[bytes]:
        """The .bin pieces: a storage flag before type-0 loads, then raw little-endian fp32."""
        return [(FLAG_FP32 if type_ == 0 else b"") + data.astype("<f4").tobytes()
                for layer_loads in self.loads for data, type_ in layer_loads]

    def _generate(self, n: int) -> np.ndarray:
        layer, k, rng = self.layer, self.ordinal, self.rng
        kind = layer.type if layer is not None else ""
        int8_loads_from = 1 + int(bool(getattr(layer, "bias_term", 0)))
        if getattr(layer, "int8_scale_term", 0) and kind in _WEIGHTED and k >= int8_loads_from:
            return self._int8_scales(n, k - int8_loads_from)
        if kind in _WEIGHTED and k == 0:
            # He init: each output sums fan_in = (inc/group)*kernel taps products
            outc = max(1, int(getattr(layer, "num_output", 1) or 1))
            return rng.normal(0.0, np.sqrt(2.0 / max(1, n // outc)), n)
        if kind in _RECURRENT:
            return self._recurrent(n, k)
        if kind == "Embed" and k == 0:  # a lookup table: unit-spread rows, as nn.Embedding starts
            return rng.normal(0.0, 1.0, n)
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
        if kind in _QUANT_SCALES:  # positive scales sized for activations within +-4
            return np.full(n, _QUANT_SCALES[kind][k]) if k < len(_QUANT_SCALES[kind]) else rng.uniform(-0.1, 0.1, n)
        return rng.uniform(-0.1, 0.1, n)  # biases and anything else small


    def _recurrent(self, n: int, k: int) -> np.ndarray:
        """RNN / GRU / LSTM: W_xc, bias, W_hc (, W_hr) uniform in +-1/sqrt(hidden) as PyTorch
        initialises them (bounded gates, no saturation); with int8 the two scale loads that
        follow fit W_xc's and W_hc's rows."""
        layer = self.layer
        hidden = max(1, int(layer.hidden_size))
        n_weights = 3 if layer.hidden_size == layer.num_output else 4  # LSTM's projection is a 4th
        if getattr(layer, "int8_scale_term", 0) and k >= n_weights:
            rows = self.loads[-1][0 if k == n_weights else 2][0].reshape(n, -1)
            return 127.0 / np.maximum(np.abs(rows).max(axis=1), 1e-6)
        bound = 1.0 / np.sqrt(hidden)
        return self.rng.uniform(-bound, bound, n)

    def _int8_scales(self, n: int, which: int) -> np.ndarray:
        """Quantization scales that fit the data: weights per output row, then activations.

        The weight scales map each row's largest magnitude to 127 (what ncnn's calibration
        tool writes); blob scales assume activations within +-4. Random scales would
        quantize everything to zero and leave nothing to compare.
        """
        if which == 0:
            rows = self.first.reshape(n, -1)
            absmax = np.maximum(np.abs(rows).max(axis=1), 1e-6)
            return 127.0 / absmax
        return np.full(n, 127.0 / 4.0)


def _gemm_fan_in(layer, n: int) -> int:
    k = int(getattr(layer, "constantK", 0) or getattr(layer, "K", 0) or 0)
    if k > 0:
        return k
    return int(np.sqrt(n))


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
    if layer.type in _WEIGHTED or layer.type == "InnerProduct":
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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("param")
    ap.add_argument("bin")
    ap.add_argument("--seed", type=int, default=0)
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
