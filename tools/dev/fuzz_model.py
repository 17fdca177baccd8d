"""The extract-time fuzzer's view of a text .param: layers as token lists it can edit,
the edits that change what a run computes and allocates, and the writers back to
text and to binary .param.bin.

Edits aim at what decides sizes at run time: kernel sizes, pads, strides, dilations,
output sizes, scales, axes, shape hints, repeat counts, shape expressions (any key a
layer's load_param reads: found by asking each layer, not listed by hand), plus
side branches of random layers hung on any blob and prefixes of the graph.
"""

from __future__ import annotations

import math
import random
import struct
from dataclasses import dataclass, field

MAGIC = 7767517
ARRAY_BASE = -23300
STRING_BASE = -23400
SHAPE_HINTS = 30  # net-level key: the output shapes a layer announces (-23330=4,3,w,h,c)

# values that break size arithmetic: zero, negatives, ncnn's sentinels, overflowing sizes
HOSTILE_INTS = (0, -1, -2, -233, -234, -100, 1, 2, 3, 4, 5, 7, 16, 33, 255, 1000, 4096, 40000,
                65536, 1 << 20, 1 << 24, 2**31 - 1, -(2**31), 10**9)
HOSTILE_FLOATS = (0.0, -1.0, 0.5, 1.5, 2.0, 3.0, 1e-3, 1e-30, 1000.0, 65504.0, 1e6, 1e9, 1e30,
                  -1e30, 3.4e38, -0.0, 1e39)
_EXPR_UNARY = ("abs", "neg", "sign", "square", "trunc", "ceil", "floor", "round", "sqrt", "exp",
               "log", "reciprocal", "rsqrt", "tanh", "erf", "sin")
_EXPR_BINARY = ("+", "-", "*", "//", "/", "max", "min", "pow", "fmod", "remainder", "atan2",
                "logaddexp", "and", "or", "xor", "lshift", "rshift")
_EXPR_LEAVES = ("0w", "0h", "0d", "0c", "1w", "1h", "1c", "-1", "-233", "0", "1", "2", "3", "7",
                "0.5", "2.5", "-3", "1000000", "2147483647", "1e30", "64", "100")


@dataclass
class LayerLine:
    type: str
    name: str
    bottoms: list
    tops: list
    params: dict = field(default_factory=dict)  # key (0..31, array keys as -23300-k) -> value text


@dataclass
class TextModel:
    layers: list

    @classmethod
    def parse(cls, text: str) -> TextModel:
        """A well-formed .param (the seeds are): no checks beyond what editing needs."""
        layers = []
        for line in text.splitlines()[2:]:
            toks = line.split()
            if len(toks) < 4:
                continue
            nb, nt = int(toks[2]), int(toks[3])
            blobs = toks[4:4 + nb + nt]
            params = {}
            for tok in toks[4 + nb + nt:]:
                k, _, v = tok.partition("=")
                params[int(k)] = v
            layers.append(LayerLine(toks[0], toks[1], blobs[:nb], blobs[nb:], params))
        return cls(layers)

    def blobs(self) -> list:
        seen: dict = {}
        for layer in self.layers:
            for b in layer.bottoms + layer.tops:
                seen.setdefault(b, None)
        return list(seen)

    def inputs(self) -> list:
        return [layer for layer in self.layers if layer.type == "Input"]

    def text(self) -> str:
        lines = [str(MAGIC), f"{len(self.layers)} {len(self.blobs())}"]
        for layer in self.layers:
            params = " ".join(f"{k}={v}" for k, v in layer.params.items())
            lines.append(f"{layer.type} {layer.name} {len(layer.bottoms)} {len(layer.tops)} "
                         f"{' '.join(layer.bottoms + layer.tops)} {params}".rstrip())
        return "\n".join(lines) + "\n"

    def binary(self) -> tuple[bytes, dict]:
        """ncnn2mem's .param.bin of this model and {blob name: its index} (a binary file has
        no names: blobs are addressed by index). None when a layer type has no ncnn index."""
        from vkncnn.layer_types import layer_to_index

        index = {b: i for i, b in enumerate(self.blobs())}
        words = [MAGIC, len(self.layers), len(index)]
        for layer in self.layers:
            type_index = layer_to_index(layer.type)
            if type_index < 0:
                return None, index
            words += [type_index, len(layer.bottoms), len(layer.tops)]
            words += [index[b] for b in layer.bottoms + layer.tops]
            for k, v in layer.params.items():
                words += _param_words(k, v)
            words.append(-233)
        return b"".join(_word(w) for w in words), index


def _word(w) -> bytes:
    if isinstance(w, float):
        try:
            return struct.pack("<f", w)
        except OverflowError:  # beyond float32: its infinity, as a C cast gives
            return struct.pack("<f", math.copysign(math.inf, w))
    return struct.pack("<i", max(-(2**31), min(2**31 - 1, int(w))))


def _number(tok: str):
    try:
        return float(tok) if any(ch in tok for ch in ".eE") else int(tok)
    except ValueError:
        return 0


def _param_words(key: int, value: str) -> list:
    if value.startswith('"') or not value or any(ch.isalpha() and ch not in "eE" for ch in value):
        raw = value.strip('"').encode()[:255]
        k = STRING_BASE - key
        return [k, len(raw)] + [int.from_bytes(raw[i:i + 4].ljust(4, b"\0"), "little", signed=True)
                                for i in range(0, len(raw), 4)]
    items = value.split(",")
    if key <= ARRAY_BASE:  # old form: the count is the first item
        vals = [_number(t) for t in items[1:] if t]
        return [key, len(vals)] + vals
    if len(items) > 1:
        vals = [_number(t) for t in items if t]
        return [ARRAY_BASE - key, len(vals)] + vals
    return [key, _number(value)]


# -- what each layer type reads --------------------------------------------------------------
_KEYS: dict | None = None


def layer_keys() -> dict:
    """{layer type: {param key: 'int' | 'float' | 'iarr' | 'farr' | 'str'}}, by running each
    layer's load_param on a recording ParamDict: its defaults, then a valid drawn case's
    params (a load_param that refuses the defaults stops before reading all its keys)."""
    global _KEYS
    if _KEYS is not None:
        return _KEYS
    import numpy as np

    import vkncnn.layers  # noqa: F401 - fills the registry
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import LAYER_REGISTRY, create_layer
    from vkncnn.tools.dev.layerfuzz.registry import GENERATORS

    class Recording(ParamDict):
        def __init__(self, seen: dict) -> None:
            super().__init__()
            self.seen = seen

        def get(self, key, default=0):
            if isinstance(default, str):
                kind = "str"
            elif isinstance(default, np.ndarray):
                kind = "farr" if default.dtype.kind == "f" else "iarr"
            else:
                kind = "float" if isinstance(default, float) else "int"
            self.seen.setdefault(int(key), kind)
            return super().get(key, default)

    keys: dict = {}
    for type_name in LAYER_REGISTRY:
        seen = keys.setdefault(type_name, {})
        sources = [{}]
        gen = GENERATORS.get(type_name)
        if gen is not None:
            for i in range(3):
                try:
                    case = gen(np.random.default_rng([7, i]))
                except Exception:  # noqa: BLE001 - a generator's own limits: no keys from it
                    case = None
                if case is not None and not case.text:
                    sources.append(case.params)
        for params in sources:
            pd = Recording(seen)
            for k, v in params.items():
                try:
                    pd.set(k, v.strip('"') if isinstance(v, str) else v)
                except Exception:  # noqa: BLE001 - a value ParamDict cannot hold: skip it
                    pass
            try:
                create_layer(type_name).load_param(pd)
            except Exception:  # noqa: BLE001 - the keys read before it refused are recorded
                pass
    _KEYS = keys
    return keys


# -- values ------------------------------------------------------------------------------------
def hostile_int(rng: random.Random, current: str | None = None) -> int:
    cur = _number(current) if current else None
    if isinstance(cur, int) and rng.random() < 0.3:
        return rng.choice((cur + 1, cur - 1, cur * 2, cur * 10, cur * 1000, -cur, cur + 233))
    if rng.random() < 0.3:
        return rng.randint(-4, 20)
    return rng.choice(HOSTILE_INTS)


def hostile_float(rng: random.Random) -> float:
    if rng.random() < 0.3:
        return round(rng.uniform(-4.0, 8.0), 3)
    return rng.choice(HOSTILE_FLOATS)


def float_text(v: float) -> str:
    if math.isinf(v):
        return "1e39" if v > 0 else "-1e39"
    text = repr(float(v))
    return text if any(ch in text for ch in ".eE") else text + ".0"


def expression(rng: random.Random, depth: int = 0) -> str:
    if depth >= 3 or rng.random() < 0.35:
        return rng.choice(_EXPR_LEAVES)
    if rng.random() < 0.35:
        return f"{rng.choice(_EXPR_UNARY)}({expression(rng, depth + 1)})"
    return f"{rng.choice(_EXPR_BINARY)}({expression(rng, depth + 1)},{expression(rng, depth + 1)})"


def expression_list(rng: random.Random) -> str:
    return ",".join(expression(rng) for _ in range(rng.randint(1, 4)))


def value_text(kind: str, rng: random.Random, current: str | None = None) -> str:
    if kind == "float":
        return float_text(hostile_float(rng))
    if kind == "str":
        return f'"{expression_list(rng)}"'
    n = rng.choice((0, 1, 1, 2, 3, 4, 5, 8))
    if kind == "farr":
        return ",".join(float_text(hostile_float(rng)) for _ in range(n)) or "0.0"
    small = rng.random() < 0.6
    vals = [rng.randint(-3, 6) if small else hostile_int(rng) for _ in range(n)]
    return ",".join(str(v) for v in vals) or "0"


# -- edits -------------------------------------------------------------------------------------
def mutate_param(model: TextModel, rng: random.Random) -> str:
    """One param of one layer set to a hostile value; returns what it did."""
    keys = layer_keys()
    candidates = [layer for layer in model.layers if keys.get(layer.type)] or model.layers
    layer = rng.choice(candidates)
    known = keys.get(layer.type, {})
    r = rng.random()
    if r < 0.08 and layer.type != "Input":
        key, kind = SHAPE_HINTS, "iarr"
    elif r < 0.85 and known:
        key = rng.choice(sorted(known))
        kind = known[key]
    elif layer.params and r < 0.95:
        key = rng.choice(sorted(layer.params))
        kind = "iarr" if key <= ARRAY_BASE else "float" if _is_float(layer.params[key]) else "int"
    else:
        key, kind = rng.randrange(32), rng.choice(("int", "float", "iarr"))
    if key <= ARRAY_BASE:
        key, kind = ARRAY_BASE - key, "iarr"
    layer.params.pop(ARRAY_BASE - key, None)  # one form per key: drop an old-form array
    current = layer.params.get(key)
    if kind == "int":
        text = str(hostile_int(rng, current))
    else:
        text = value_text(kind, rng, current)
    if kind in ("iarr", "farr") and "," not in text:
        text += ","  # a one-value array stays an array
    layer.params[key] = text
    return f"{layer.type} {layer.name}: {key}={text[:60]}"


def _is_float(text: str) -> bool:
    return any(ch in text for ch in ".eE") and not text.startswith('"')


def set_expression(model: TextModel, rng: random.Random) -> str:
    """A shape expression on a Reshape (6), Crop (19-21) or Interp (9), or a new such layer."""
    hosts = [layer for layer in model.layers if layer.type in ("Reshape", "Crop", "Interp")]
    if hosts and rng.random() < 0.6:
        layer = rng.choice(hosts)
    else:
        layer = add_branch(model, rng, rng.choice(("Reshape", "Crop", "Interp")), params=False)
    if layer.type == "Reshape":
        layer.params[6] = f'"{expression_list(rng)}"'
    elif layer.type == "Interp":
        layer.params[0] = str(rng.randint(1, 3))
        layer.params[9] = f'"{expression_list(rng)}"'
    else:
        for k in (19, 20) + ((21,) if rng.random() < 0.7 else ()):
            layer.params[k] = f'"{expression_list(rng)}"'
    return f"{layer.type} {layer.name}: expression {layer.params}"


def add_branch(model: TextModel, rng: random.Random, type_name: str | None = None,
               params: bool = True) -> LayerLine:
    """A new layer reading one or two existing blobs; its top is a new net output."""
    keys = layer_keys()
    if type_name is None:
        type_name = rng.choice(sorted(t for t in keys if t not in ("Input", "MemoryData")))
    blobs = model.blobs()
    nb = 2 if rng.random() < 0.2 and len(blobs) > 1 else 1
    bottoms = [rng.choice(blobs) for _ in range(nb)]
    n = len(model.layers)
    layer = LayerLine(type_name, f"fz{n}", bottoms, [f"fz{n}"])
    if params:
        for key in rng.sample(sorted(keys.get(type_name, {})), min(3, len(keys.get(type_name, {})))):
            layer.params[key] = value_text(keys[type_name][key], rng) if keys[type_name][key] != "int" \
                else str(hostile_int(rng))
    # after the last producer of its bottoms, so the file stays in dependency order
    last = max(i for i, ly in enumerate(model.layers) if set(ly.tops) & set(bottoms))
    model.layers.insert(last + 1, layer)
    return layer


def cut(model: TextModel, rng: random.Random) -> str:
    """Keep a prefix of the layers: every blob a kept layer reads is made by a kept one."""
    k = rng.randint(1, len(model.layers))
    del model.layers[k:]
    return f"first {k} layers"


def mutate_model(model: TextModel, rng: random.Random) -> list:
    """One to three edits; their descriptions."""
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        r = rng.random()
        if r < 0.6:
            done.append(mutate_param(model, rng))
        elif r < 0.75:
            done.append(set_expression(model, rng))
        elif r < 0.92:
            layer = add_branch(model, rng)
            done.append(f"branch {layer.type} on {layer.bottoms} {layer.params}")
        else:
            done.append(cut(model, rng))
    return done


# -- input shapes --------------------------------------------------------------------------------
def mutate_shape(shape: tuple, rng: random.Random, big: int) -> tuple:
    """A numpy shape of ncnn rank 1-4 changed: a zero extent, another rank, other channels,
    one extent made large (total at most `big` values), or extents swapped."""
    shape = list(shape) or [1]
    r = rng.random()
    if r < 0.2:
        shape[rng.randrange(len(shape))] = 0
    elif r < 0.4:
        dims = rng.randint(1, 4)
        shape = [rng.choice((1, 1, 2, 3, 4, 5, 8, 13, 16)) for _ in range(dims)]
    elif r < 0.6:
        shape[0] = rng.choice((1, 2, 4, 7, 16, 64))
    elif r < 0.8:
        i = rng.randrange(len(shape))
        rest = max(1, math.prod(s for j, s in enumerate(shape) if j != i and s > 0))
        # at most 2^14 along one axis: a recurrent layer steps through it in Python, one
        # step at a time, and NMS compares candidates pairwise, both well past the time
        # limit at 2^20 although their memory stays small (figures: docs/perf-notes.md,
        # "Fuzz shapes: at most 2^14 along one axis")
        shape[i] = max(1, min(rng.choice((257, 1000, 4097, 16384)), big // rest))
    else:
        rng.shuffle(shape)
    return tuple(shape)
