"""Fuzz cases for the activation layers (ReLU, Clip, ELU, ..., one generator each), Log,
PReLU and GLU.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, dims, floats, pick, shape, tensor


def _act(name, params):
    def gen(rng):
        return Case(name, params(rng), [tensor(rng, shape(rng, dims(rng), 1, 9), -3.0, 3.0)])
    return gen


ACTIVATIONS = {
    "ReLU": _act("ReLU", lambda r: {0: floats(r, 1, 0.0, 0.5)[0]} if chance(r, 0.5) else {}),
    "Clip": _act("Clip", lambda r: {0: floats(r, 1, -2.0, 0.0)[0], 1: floats(r, 1, 0.0, 2.0)[0]}),
    "ELU": _act("ELU", lambda r: {0: floats(r, 1, 0.1, 2.0)[0]}),
    "CELU": _act("CELU", lambda r: {0: floats(r, 1, 0.2, 2.0)[0]}),
    "SELU": _act("SELU", lambda r: {0: floats(r, 1, 1.0, 2.0)[0], 1: floats(r, 1, 0.5, 1.5)[0]}),
    "HardSigmoid": _act("HardSigmoid", lambda r: {0: floats(r, 1, 0.1, 0.4)[0], 1: floats(r, 1, 0.2, 0.7)[0]}),
    "HardSwish": _act("HardSwish", lambda r: {0: floats(r, 1, 0.1, 0.4)[0], 1: floats(r, 1, 0.2, 0.7)[0]}),
    "Sigmoid": _act("Sigmoid", lambda r: {}),
    "Swish": _act("Swish", lambda r: {}),
    "TanH": _act("TanH", lambda r: {}),
    "Mish": _act("Mish", lambda r: {}),
    "GELU": _act("GELU", lambda r: {0: int(r.integers(0, 2))}),
    "Softplus": _act("Softplus", lambda r: {}),
    "Erf": _act("Erf", lambda r: {}),
    "AbsVal": _act("AbsVal", lambda r: {}),
    "BNLL": _act("BNLL", lambda r: {}),
    "Shrink": _act("Shrink", lambda r: {0: floats(r, 1, -0.5, 0.5)[0], 1: floats(r, 1, 0.0, 1.0)[0]}),
    "Threshold": _act("Threshold", lambda r: {0: floats(r, 1, -1.0, 1.0)[0]}),
    "Exp": _act("Exp", lambda r: {0: pick(r, (-1.0, 2.0, 2.5)), 1: floats(r, 1, -1, 1)[0],
                                   2: floats(r, 1, -1, 1)[0]}),
    "Power": _act("Power", lambda r: {0: pick(r, (1.0, 2.0, 3.0)), 1: floats(r, 1, -1, 1)[0],
                                       2: floats(r, 1, -1, 1)[0]}),
}


def log_(rng):
    p = {0: pick(rng, (-1.0, 2.0, 10.0)), 1: floats(rng, 1, 0.5, 1.5)[0], 2: floats(rng, 1, 0.0, 0.5)[0]}
    return Case("Log", p, [tensor(rng, shape(rng, dims(rng), 1, 9), 0.2, 3.0)])


def prelu(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 8)
    n = {1: shp[0], 2: shp[0], 3: shp[0], 4: shp[0]}[d] if chance(rng, 0.7) else 1
    return Case("PReLU", {0: n}, [tensor(rng, shp)])


def glu(rng):
    d = dims(rng, 1, 3)
    shp = list(shape(rng, d, 1, 6))
    axis = int(rng.integers(0, d))
    shp[axis] *= 2
    return Case("GLU", {0: axis - d if chance(rng, 0.3) else axis}, [tensor(rng, tuple(shp))])
