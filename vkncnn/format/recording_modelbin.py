"""RecordingModelBin: seeded random weights of the right sizes for any layer, as a .bin.

The .bin format has no index: its layout is whatever each layer's load_model asks for,
in order. So the layers are asked: each load is answered with freshly generated data,
which is remembered, and `chunks` writes the loads out in ncnn's format (the storage flag
word before load type 0, raw fp32 for type 1).

Plain N(0, 1) weights make deep nets blow up or collapse to constants, which makes any
comparison meaningless. Weights start scaled by fan-in (He init), normalisation statistics
get positive variances, biases stay small. The shader harness (vkncnn.testing) uses it;
`vkncnn randweights` (tools/randweights.py) adds a pass that rescales linear layers to
unit activation spread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .modelbin import FLAG_FP32, ModelBin

if TYPE_CHECKING:
    from ..layer import Layer

FLAG_WORD_FP32 = FLAG_FP32.to_bytes(4, "little")  # written before each type-0 load: raw float32 follows

# Layers whose first load is the weight matrix, with the param id of their output count.
WEIGHTED = {"Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise",
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
        self.layer: Layer | None = None
        self.ordinal = 0
        self.layer_name = None

    def start_layer(self, layer: Layer) -> None:
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
        return [(FLAG_WORD_FP32 if type_ == 0 else b"") + data.astype("<f4").tobytes()
                for layer_loads in self.loads for data, type_ in layer_loads]

    def _generate(self, n: int) -> np.ndarray:
        layer, k, rng = self.layer, self.ordinal, self.rng
        kind = layer.type if layer is not None else ""
        int8_loads_from = 1 + int(bool(getattr(layer, "bias_term", 0)))
        if getattr(layer, "int8_scale_term", 0) and kind in WEIGHTED and k >= int8_loads_from:
            return self._int8_scales(n, k - int8_loads_from)
        if kind in WEIGHTED and k == 0:
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
        layer: Any = self.layer  # an RNN, GRU or LSTM: its params are its own attributes
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
