"""What a model is made of: every blob's shape, every layer's cost and weights.

Shapes are not in a .param (only optional hints), so they are found by running the model:
once, on the numpy path, on zero inputs of the given shapes, extracting every blob in file
order. Shapes are numpy order, as np.array(mat).shape: (w,), (h, w), (c, h, w), (c, d, h, w).
Layers whose output size depends on values (detection heads, NMS) report the size they
produced for that zero input.

FLOPs follow one convention, computed from the shapes and the layer's params:
- a multiply-add counts 2: Convolution*, ConvolutionDepthWise* and DeformableConv2D
  (output positions x weights per output channel), Deconvolution* (input positions x
  weights per input channel), InnerProduct, Gemm and MatMul (output elements x the summed
  dimension), MultiHeadAttention (the four projections and the two attention products),
  SDPA (the two attention products), RNN / LSTM / GRU (time steps x weights). Biases and
  fused activations are not counted.
- Pooling: one per input value in each window (kernel taps x output elements; global
  pooling: the input elements).
- pure data movement costs 0 (Input, Split, Concat, Slice, Reshape, Permute, Crop,
  Padding, ...; see DATA_MOVEMENT).
- every other layer (activations, BinaryOp, normalisations, Softmax, ...) counts 1 per
  output element: an estimate, not a count of instructions.

Params are the values a layer loads from the .bin (weights, biases, normalisation
statistics, quantization scales), counted as they are read, whatever their storage type.
"runs_on" says where the layer runs on the GPU path: "gpu" when it has a shader
(layer.support_vulkan after loading), else "host" (numpy, inside the GPU plan).

Runtime-neutral: only the numpy path runs here, so it works on machines without Vulkan.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

import vkncnn
from vkncnn.format.datareader import opened_reader
from vkncnn.format.modelbin import ModelBin, ModelBinFromDataReader
from vkncnn.format.recording_modelbin import RecordingModelBin

from .cmd_common import CommandError, Shape, named_shapes

CONVOLUTIONS = {"Convolution", "Convolution1D", "Convolution3D", "ConvolutionDepthWise", "ConvolutionDepthWise1D",
                "ConvolutionDepthWise3D", "DeformableConv2D"}
DECONVOLUTIONS = {"Deconvolution", "Deconvolution1D", "Deconvolution3D", "DeconvolutionDepthWise",
                  "DeconvolutionDepthWise1D", "DeconvolutionDepthWise3D"}
RECURRENT = {"RNN", "LSTM", "GRU"}
POOLINGS = {"Pooling", "Pooling1D", "Pooling3D"}
DATA_MOVEMENT = {"Input", "Split", "Concat", "Slice", "Reshape", "Flatten", "Permute", "Crop", "Padding",
                 "ShuffleChannel", "PixelShuffle", "Reorg", "Squeeze", "ExpandDims", "Tile", "Noop", "Dropout",
                 "MemoryData", "Packing", "Flip", "CopyTo", "DeepCopy", "Cast", "Fold", "Unfold", "Embed"}


@dataclass
class LayerRow:
    name: str
    type: str
    bottoms: list[str]
    tops: list[str]
    shapes: list[list[int]]  # one per top
    flops: int
    params: int
    runs_on: str  # "gpu" or "host"


@dataclass
class ModelSummary:
    inputs: list[dict]   # [{"name", "shape"}]
    outputs: list[dict]  # [{"name", "shape"}]
    layers: list[LayerRow] = field(default_factory=list)

    @property
    def flops(self) -> int:
        return sum(row.flops for row in self.layers)

    @property
    def params(self) -> int:
        return sum(row.params for row in self.layers)

    def to_json(self) -> dict:
        return {"inputs": self.inputs, "outputs": self.outputs, "layers": [asdict(r) for r in self.layers],
                "flops": self.flops, "params": self.params}


# -- loading ------------------------------------------------------------------------------------
class CountingModelBin(ModelBin):
    """Passes every load through to `source` and counts the values each layer asked for."""

    def __init__(self, source: ModelBin) -> None:
        self.source = source
        self.counts: list[int] = []
        self.layer_name: str | None = None

    def start_layer(self, layer) -> None:
        self.counts.append(0)
        self.source.layer_name = layer.name
        if isinstance(self.source, RecordingModelBin):
            self.source.start_layer(layer)

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        self.counts[-1] += n
        return self.source.load_flat(n, type_)


def new_net(gpu: bool = False) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    return net


def load_param(param: str | Path, gpu: bool = False) -> vkncnn.Net:
    """A net with the layers of `param` (text, or binary when it ends in .bin), no weights yet."""
    net = new_net(gpu)
    path = str(param)
    if path.endswith(".bin"):
        net.load_param_bin(path)
    else:
        net.load_param(path)
    return net


def count_params(param: str | Path, bin_path: str | Path | None, seed: int = 0) -> tuple[list[int], bytes | None]:
    """Values each layer loads, in file order; without a .bin also the bytes of seeded random
    weights (RecordingModelBin) that fit the .param.

    The layers are asked on a net of their own: a .bin has no index, its layout is whatever
    each layer's load_model asks for, so asking is the only way to know.
    """
    probe = load_param(param)
    rec = RecordingModelBin(seed) if bin_path is None else None
    if rec is not None:
        counter = CountingModelBin(rec)
        _load_each(probe, counter)
        return counter.counts, b"".join(rec.chunks)
    with opened_reader(str(bin_path)) as (reader, name):
        counter = CountingModelBin(ModelBinFromDataReader(reader, name))
        _load_each(probe, counter)
    return counter.counts, None


def _load_each(net: vkncnn.Net, mb: CountingModelBin) -> None:
    for layer in net.layers():
        mb.start_layer(layer)  # a .bin reader's errors name the layer and the offset
        layer.load_model(mb)


# -- input shapes -------------------------------------------------------------------------------
def _hinted_shape(layer) -> Shape | None:
    """An Input layer's shape from its w/h/d/c params, else from the .param's -23330 hints."""
    w, h, d, c = (int(getattr(layer, k, 0) or 0) for k in ("w", "h", "d", "c"))
    if c > 0 and h > 0 and w > 0:
        return (c, d, h, w) if d > 0 else (c, h, w)
    if h > 0 and w > 0:
        return (h, w)
    if w > 0:
        return (w,)
    for hint in getattr(layer, "top_shapes", [])[:1]:  # ncnn's hint per top: dims, w, h, c
        if len(hint) >= 4 and 1 <= hint[0] <= 3 and all(v > 0 for v in hint[1:1 + hint[0]]):
            dims, hw, hh, hc = hint[:4]
            return {1: (hw,), 2: (hh, hw), 3: (hc, hh, hw)}[dims]
    return None


def input_shapes(net: vkncnn.Net, given: list[tuple[str | None, Shape]] = ()) -> dict[str, Shape]:
    """Every input's shape: --shape first, then the Input layer's params or the shape hints;
    a CommandError names the inputs left without one."""
    names = net.input_names()
    shapes = named_shapes(list(given), names)
    blobs, layers = net.blobs(), net.layers()
    missing = []
    for index, name in zip(net.input_indexes(), names):
        if name in shapes:
            continue
        hint = _hinted_shape(layers[blobs[index].producer])
        if hint is None:
            missing.append(name)
        else:
            shapes[name] = hint
    if missing:
        flags = " ".join(f"--shape {n}=C,H,W" for n in missing)
        raise CommandError(f"no shape for input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}: "
                           f"the .param gives none; pass {flags} (numpy order, e.g. 3,224,224)")
    return {name: shapes[name] for name in names}


def infer_shapes(net: vkncnn.Net, shapes: dict[str, Shape]) -> dict[int, Shape]:
    """Blob index -> shape, from one numpy run on zeros. Extracting blobs in file order
    with light mode off runs each layer once."""
    found: dict[int, Shape] = {}
    with net.create_extractor() as ex:
        ex.set_light_mode(False)
        for name, shape in shapes.items():
            ex.input(name, vkncnn.Mat(np.zeros(shape, np.float32)))
        for layer in net.layers():
            for top in layer.tops:
                if top not in found:
                    _, mat = ex.extract(top)
                    found[top] = tuple(int(v) for v in np.array(mat).shape)
    return found


# -- FLOPs --------------------------------------------------------------------------------------
def _size(shape) -> int:
    return math.prod(shape) if shape else 0


def layer_flops(layer, ins: list[Shape], outs: list[Shape], params: int) -> int:
    """The layer's FLOPs under the module's convention (multiply-add = 2)."""
    kind = layer.type
    out_elems = sum(_size(s) for s in outs)
    if kind in DATA_MOVEMENT:
        return 0
    if kind in CONVOLUTIONS and outs and outs[0]:
        per_channel = int(getattr(layer, "weight_data_size", 0) or 0)
        if per_channel <= 0 and len(ins) > 1:  # dynamic weights arrive as the second input
            per_channel = _size(ins[1])
        channels = max(1, outs[0][0] if len(outs[0]) > 1 else 1)
        return 2 * (_size(outs[0]) // channels) * per_channel
    if kind in DECONVOLUTIONS and ins and ins[0]:
        weights = int(getattr(layer, "weight_data_size", 0) or 0)
        if weights <= 0 and len(ins) > 1:
            weights = _size(ins[1])
        channels = max(1, ins[0][0] if len(ins[0]) > 1 else 1)
        return 2 * (_size(ins[0]) // channels) * weights
    if kind == "InnerProduct":
        num_output = max(1, int(getattr(layer, "num_output", 0) or 1))
        return 2 * out_elems * int(getattr(layer, "weight_data_size", 0) or 0) // num_output
    if kind == "Gemm":
        return 2 * out_elems * _gemm_k(layer, ins)
    if kind == "MatMul" and ins and ins[0]:
        return 2 * out_elems * ins[0][-1]
    if kind == "MultiHeadAttention":
        return _attention_flops(layer, ins, outs)
    if kind == "SDPA" and len(ins) >= 3 and outs:
        q, v = ins[0], ins[2]
        keys = outs[1][-2] if len(outs) > 1 and len(outs[1]) >= 2 else ins[1][-2] if len(ins[1]) >= 2 else 1
        queries = _size(q[:-1])
        return 2 * queries * keys * (q[-1] + v[-1])
    if kind in RECURRENT and ins and ins[0]:
        steps = ins[0][0] if len(ins[0]) > 1 else 1
        return 2 * steps * params
    if kind in POOLINGS:
        if getattr(layer, "global_pooling", 0) or getattr(layer, "adaptive_pooling", 0):
            return sum(_size(s) for s in ins[:1])
        taps = 1
        for attr in ("kernel_w", "kernel_h", "kernel_d"):
            taps *= max(1, int(getattr(layer, attr, 1) or 1))
        return out_elems * taps
    return out_elems


def _gemm_k(layer, ins: list[Shape]) -> int:
    """The summed dimension of A x B."""
    if not getattr(layer, "constantA", 0) and ins and ins[0]:
        a = ins[0]
        return a[-2] if getattr(layer, "transA", 0) and len(a) >= 2 else a[-1]
    if not getattr(layer, "constantB", 0) and ins and ins[0]:
        b = ins[0]
        return b[-1] if getattr(layer, "transB", 0) or len(b) < 2 else b[-2]
    return int(getattr(layer, "constantK", 0) or 0)


def _attention_flops(layer, ins: list[Shape], outs: list[Shape]) -> int:
    """q, k, v projections + q k^T + attention x v + the output projection."""
    embed = int(getattr(layer, "embed_dim", 0) or 0)
    if not ins or not outs or embed <= 0:
        return sum(_size(s) for s in outs)
    n_qkv = len(ins) - int(getattr(layer, "attn_mask", 0) or 0) - 2 * int(getattr(layer, "kv_cache", 0) or 0)
    n_qkv = min(max(n_qkv, 1), 3)

    def rows(shape: Shape) -> int:
        return shape[0] if len(shape) >= 2 else 1

    q, k, v = ins[0], ins[0 if n_qkv == 1 else 1], ins[min(n_qkv - 1, 2)]
    qdim = q[-1]
    kdim, vdim = k[-1], v[-1]
    lq, lk = rows(q), rows(k)
    keys = outs[1][-2] if len(outs) > 1 and len(outs[1]) >= 2 else lk  # with a KV cache: past + new
    macs = lq * qdim * embed + lk * (kdim + vdim) * embed + 2 * lq * keys * embed + lq * embed * qdim
    return 2 * macs


# -- the summary --------------------------------------------------------------------------------
def summarize(param: str | Path, bin_path: str | Path | None = None,
              given: list[tuple[str | None, Shape]] = (), seed: int = 0) -> ModelSummary:
    """Load the model (seeded random weights without a .bin), run it once on zeros, and
    describe every layer."""
    net = load_param(param)
    shapes = input_shapes(net, given)  # before the weights: a missing shape fails at once
    counts, weights = count_params(param, bin_path, seed)
    net.load_model(weights if weights is not None else str(bin_path))
    blob_shapes = infer_shapes(net, shapes)
    blobs = net.blobs()
    summary = ModelSummary(
        inputs=[{"name": n, "shape": list(shapes[n])} for n in net.input_names()],
        outputs=[{"name": blobs[i].name, "shape": list(blob_shapes.get(i, ()))} for i in net.output_indexes()])
    for layer, params in zip(net.layers(), counts):
        ins = [blob_shapes.get(b, ()) for b in layer.bottoms]
        outs = [blob_shapes.get(t, ()) for t in layer.tops]
        summary.layers.append(LayerRow(
            name=layer.name, type=layer.type,
            bottoms=[blobs[b].name for b in layer.bottoms], tops=[blobs[t].name for t in layer.tops],
            shapes=[list(s) for s in outs], flops=int(layer_flops(layer, ins, outs, params)), params=int(params),
            runs_on="gpu" if layer.support_vulkan else "host"))
    return summary
