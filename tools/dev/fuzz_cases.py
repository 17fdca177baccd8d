"""The fuzzer's cases: what one case is, and how case N of a seed is drawn.

A case is plain data (it crosses a pipe to a worker process and is saved as a
reproducer): the .param bytes, the weights (a real .bin, or how the worker makes them),
the inputs' shapes, the blobs to extract, the path. Case N of seed S is drawn from a
generator seeded by (S, N) alone, so `--seed S --case N` replays it anywhere.

Extract-time kinds:
- `model`: a real model (ncnn's benchmark set without weights, digits with its .bin),
  its params edited (tools/dev/fuzz_model.py), its input shapes changed, sometimes
  written as .param.bin, sometimes also byte-mutated as the load-time fuzzer does;
- `graph`: one or two layers drawn valid by the layer fuzzer's generators
  (tools/dev/layerfuzz/registry.py), then edited the same way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from ..benchmark_models import BENCHMARK_DIR, DATA
from . import fuzz_load, fuzz_model

# real models whose weights stay small enough to make per case (a vision transformer's
# 344 MB only after a cut); blazeface to resnet18: 0.1 to 46 MB of fp32
SEED_MODELS = ("squeezenet", "mobilenet", "mobilenet_v2", "mobilenet_v3", "shufflenet", "shufflenet_v2",
               "mnasnet", "proxylessnasnet", "efficientnet_b0", "efficientnetv2_b0", "regnety_400m",
               "blazeface", "googlenet", "resnet18", "squeezenet_ssd", "mobilenet_ssd", "mobilenet_yolo",
               "mobilenetv2_yolov3", "yolov4-tiny", "nanodet_m", "yolo-fastest-1.1", "yolo-fastestv2",
               "FastestDet", "squeezenet_int8", "mobilenet_int8", "vision_transformer")
MUST_CUT = {"vision_transformer"}
SIDES = (8, 8, 12, 16, 16, 24, 32, 32, 48, 64)  # input extents of real models: small, so cases stay fast
FILLS = ("zero", "normal", "normal", "recorded", "chaos")
HARNESS_CHECKS = ("raise", "spin", "sleep", "abort", "hog")  # modes that must each be caught


@dataclass
class Case:
    index: int
    mode: str = "extract"     # extract | load | one of HARNESS_CHECKS | cold
    fmt: str = "text"         # text | binary (.param.bin)
    param: bytes = b""
    weights: bytes = b""      # a real .bin; when empty, `fill` says how the worker makes them
    fill: str = "zero"        # zero | normal | chaos | recorded | none (no load_model)
    inputs: list = field(default_factory=list)  # (blob name, numpy shape, dtype name)
    outputs: list | None = None  # blobs to extract; None: every output of the net
    gpu: bool = False
    origin: str = ""          # how it was made, for the report

    def describe(self) -> str:
        shapes = ", ".join(f"{n}{tuple(s)}" + ("" if d == "float32" else f" {d}") for n, s, d in self.inputs)
        return f"[{self.mode}/{self.fmt}/{self.fill}{'/gpu' if self.gpu else ''}] {self.origin}; inputs {shapes}"


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"{seed}/{index}")


@cache
def _seed_text(name: str) -> str:
    if name == "digits":
        return (DATA / "digits.param").read_text()
    return (BENCHMARK_DIR / f"{name}.param").read_text()


@lru_cache(maxsize=1)
def _digits_bin() -> bytes:
    path = DATA / "digits.bin"
    return path.read_bytes() if path.exists() else b""


def _input_shape(layer: fuzz_model.LayerLine, rng: random.Random) -> tuple:
    """A small shape like the one the model's Input layer declares (w=0, h=1, c=2)."""
    def num(k, default):
        try:
            return int(layer.params.get(k, default))
        except ValueError:
            return default
    w, h, c = num(0, 0), num(1, 0), num(2, 0)
    side = rng.choice(SIDES)
    if w > 0 and h > 0:
        scale = side / max(w, h)
        return (max(1, c), max(1, round(h * scale)), max(1, round(w * scale)))
    return (c if c > 0 else 3, side, side)


def draw(seed: int, index: int, gpu: bool = False, budget: int = 64 << 20, load_only: bool = False) -> Case:
    rng = case_rng(seed, index)
    if load_only:
        return _load_case(index, rng)
    # on the GPU a whole model is dozens of pipelines (lavapipe compiles each with LLVM):
    # there the cases are mostly small graphs, which reach the same shaders far faster
    if rng.random() < (0.1 if gpu else 0.45):
        case = _model_case(index, rng, budget)
    else:
        case = _graph_case(index, rng, budget)
    case.gpu = gpu
    return case


def _load_case(index: int, rng: random.Random) -> Case:
    corpus = fuzz_load.seed_corpus()
    kind, param, weights = corpus[rng.randrange(len(corpus))]
    p, w = fuzz_load.mutate(kind, param, weights, rng)
    return Case(index, "load", kind, p, w, "none", origin="load-time mutation")


def _model_case(index: int, rng: random.Random, budget: int) -> Case:
    names = SEED_MODELS + ("digits",) * 3
    name = rng.choice(names)
    model = fuzz_model.TextModel.parse(_seed_text(name))
    done = []
    big = min(budget // 64, 1 << 18)
    inputs = []
    for layer in model.inputs():  # the shapes the real model takes, before its Input params change
        shape = (1, 8, 8) if name == "digits" else _input_shape(layer, rng)
        if rng.random() < 0.35:
            shape = fuzz_model.mutate_shape(shape, rng, big)
            done.append(f"input {layer.tops[0]} {shape}")
        inputs.append((layer.tops[0], shape, "float32"))
    if name in MUST_CUT:
        done.append(fuzz_model.cut(model, rng))
    if rng.random() < 0.85:
        done += fuzz_model.mutate_model(model, rng)
    blobs = set(model.blobs())
    inputs = [x for x in inputs if x[0] in blobs]  # a cut may have dropped an input
    weights, fill = b"", rng.choice(FILLS)
    if name == "digits" and rng.random() < 0.7:
        weights, fill = _digits_bin(), "real"
    outputs = None
    if rng.random() < 0.25:  # an inner blob too, not only the net's outputs
        outputs = sorted(set(_outputs(model)) | {rng.choice(model.blobs())})
    case = Case(index, param=model.text().encode(), weights=weights, fill=fill, inputs=inputs,
                outputs=outputs, origin=f"{name}: " + "; ".join(done))
    return _finish(case, model, rng)


def _outputs(model: fuzz_model.TextModel) -> list:
    used = {b for layer in model.layers for b in layer.bottoms}
    return [b for layer in model.layers for b in layer.tops if b not in used]


def _finish(case: Case, model: fuzz_model.TextModel, rng: random.Random) -> Case:
    """Sometimes .param.bin instead of text; sometimes load-time damage on top."""
    if rng.random() < 0.15:
        data, index = model.binary()
        if data is not None:
            case.fmt, case.param = "binary", data
            case.inputs = [(str(index.get(n, n)), s, d) for n, s, d in case.inputs]
            if case.outputs is not None:
                case.outputs = [str(index[n]) for n in case.outputs]
    if rng.random() < 0.06:
        case.param, weights = fuzz_load.mutate(case.fmt, case.param, case.weights, rng)
        case.weights = weights if case.weights else b""
        case.origin += "; load-time damage"
    return case


def _draw_layer_case(rng: random.Random):
    from .layerfuzz.registry import GENERATORS

    types = sorted(GENERATORS)
    for _ in range(8):
        type_name = rng.choice(types)
        try:
            case = GENERATORS[type_name](np.random.default_rng(rng.getrandbits(64)))
        except Exception:  # noqa: BLE001 - a generator that cannot draw this time: draw another
            case = None
        if case is not None:
            return type_name, case
    return None, None


def _graph_case(index: int, rng: random.Random, budget: int) -> Case:
    from vkncnn.testing import weights_bin

    type_name, first = _draw_layer_case(rng)
    if first is None:
        return Case(index, param=b"", origin="no generator drew a case", fill="none")
    model = fuzz_model.TextModel.parse(first.param_text())
    inputs = [(f"in{i}", tuple(x.shape), "int32" if x.dtype == np.int32 else "float32")
              for i, x in enumerate(first.inputs)]
    origin = [type_name]
    weights = weights_bin(first.weights) if first.weights is not None else b""
    if rng.random() < 0.25:
        second_type, second = _draw_layer_case(rng)
        if second is not None:
            _stack(model, fuzz_model.TextModel.parse(second.param_text()), inputs, second)
            origin.append(f"then {second_type}")
            weights = weights + weights_bin(second.weights) if weights and second.weights is not None else b""
    if rng.random() < 0.6:
        origin += fuzz_model.mutate_model(model, rng)
    big = min(budget // 16, 1 << 22)
    if inputs and rng.random() < 0.3:
        k = rng.randrange(len(inputs))
        name, shape, dtype = inputs[k]
        inputs[k] = (name, fuzz_model.mutate_shape(shape, rng, big), dtype)
        origin.append(f"input {name} {inputs[k][1]}")
    fill = rng.choice(FILLS)
    if not (weights and rng.random() < 0.5):
        weights = b""
    else:
        fill = "real"
    case = Case(index, param=model.text().encode(), weights=weights, fill=fill, inputs=inputs,
                outputs=list(first.outputs) or None, origin=" ".join(origin))
    if case.outputs is not None:
        case.outputs = [b for b in case.outputs if b in model.blobs()] or None
    return _finish(case, model, rng)


def _stack(model: fuzz_model.TextModel, other: fuzz_model.TextModel, inputs: list, second) -> None:
    """`other`'s layers after `model`'s: its first input reads model's first output, its other
    inputs stay inputs of the net (renamed apart)."""
    target = _outputs(model)[0]
    rename = {}
    for layer in other.layers:
        for b in layer.bottoms + layer.tops:
            rename.setdefault(b, f"b_{b}")
    rename["in0"] = target
    for layer in other.layers:
        if layer.type == "Input" and layer.tops == ["in0"]:
            continue
        layer.name = f"b_{layer.name}"
        layer.bottoms = [rename[b] for b in layer.bottoms]
        layer.tops = [rename[b] for b in layer.tops]
        model.layers.append(layer)
    for i, x in enumerate(second.inputs[1:], start=1):
        inputs.append((f"b_in{i}", tuple(x.shape), "int32" if x.dtype == np.int32 else "float32"))
