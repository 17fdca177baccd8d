"""Activations and other one-input elementwise layers, with ncnn's grids from
tests/test_<layer>.cpp: the common four ranks of shapes, each layer's params."""

from __future__ import annotations

import numpy as np

from .registry import GridCase, case_rng, grid, nc

# the shapes most activation tests share: 4-D, 3-D, 2-D, 1-D
COMMON = [nc(5, 6, 7, 24), nc(7, 8, 9, 12), nc(3, 4, 5, 13), nc(5, 7, 24), nc(7, 9, 12), nc(3, 5, 13),
          nc(15, 24), nc(17, 12), nc(19, 15), nc(128), nc(124), nc(127)]
WIDE = [nc(7, 6, 5, 32)] + COMMON[:3] + [nc(4, 7, 32)] + COMMON[3:6] + [nc(13, 32)] + COMMON[6:9] + COMMON[9:] + [
    nc(120)]  # ELU / SELU: a 32-channel shape and a 120-long vector more


def _uniform(name: str, index: int, shape: tuple, lo: float, hi: float) -> np.ndarray:
    return case_rng(name, 1000 + index).uniform(lo, hi, size=shape).astype(np.float32)


@grid("Sigmoid", "Swish", "Mish", "TanH", "Softplus", "BNLL")
def plain(name: str) -> list:
    return [GridCase({}, [], [s]) for s in COMMON]


@grid("AbsVal")
def absval(name: str) -> list:
    shapes = COMMON[:3] + [nc(1, 1, 13)] + COMMON[3:6] + [nc(1, 13)] + COMMON[6:9] + [nc(1)] + COMMON[9:]
    return [GridCase({}, [], [s]) for s in shapes]


@grid("Erf")
def erf(name: str) -> list:
    shapes = COMMON[:3] + [nc(10, 12, 5), nc(3, 6, 18), nc(12, 4, 7), nc(12, 28), nc(20, 15), nc(19, 13), nc(64),
                           nc(156), nc(243)]
    return [GridCase({}, [], [s]) for s in shapes]


@grid("ReLU")
def relu(name: str) -> list:
    return [GridCase({0: slope}, [], [s]) for s in COMMON[:3] + COMMON[3:] for slope in (0.0, 0.1)]


@grid("Clip")
def clip(name: str) -> list:
    shapes = [nc(3, 3, 3, 48)] + COMMON[:3] + [nc(3, 3, 48)] + COMMON[3:6] + [nc(19, 48)] + COMMON[6:]
    return [GridCase({0: -1.0, 1: 1.0}, [], [s]) for s in shapes]


@grid("HardSwish")
def hardswish(name: str) -> list:
    return [GridCase({0: 0.2, 1: 0.5}, [], [s]) for s in COMMON]


@grid("HardSigmoid")
def hardsigmoid(name: str) -> list:
    shapes = COMMON[:3] + [nc(3, 3, 48)] + COMMON[3:6] + [nc(19, 48)] + COMMON[6:]
    return [GridCase({0: 0.5, 1: 0.5}, [], [s]) for s in shapes]


@grid("GELU")
def gelu(name: str) -> list:
    shapes = [nc(6, 7, 9, 32)] + COMMON[:3] + [nc(9, 7, 32)] + COMMON[3:6] + [nc(13, 32)] + COMMON[6:] + [nc(120)]
    return [GridCase({0: fast}, [], [s]) for s in shapes for fast in (0, 1)]


@grid("ELU")
def elu(name: str) -> list:
    # ncnn draws alpha in [0.001, 1000] per call
    return [GridCase({0: float(case_rng(name, i).uniform(0.001, 1000.0))}, [], [s]) for i, s in enumerate(WIDE)]


@grid("SELU")
def selu(name: str) -> list:
    return [GridCase({0: 1.673264, 1: 1.0507}, [], [s]) for s in WIDE]


@grid("CELU")
def celu(name: str) -> list:
    rows = [((3, 8, 12, 18), 1.0), ((4, 7, 9, 16), 0.1), ((3, 5, 12, 16), 1.0), ((9, 6, 7, 14), 0.1),
            ((5, 6, 9, 10), 1.0), ((6, 8, 2, 15), 0.1), ((7, 6, 18), 1.0), ((9, 6, 15), 0.1), ((9, 7, 16), 1.0),
            ((6, 10, 15), 0.1), ((2, 7, 11), 1.0), ((6, 10, 7), 0.1), ((12, 18), 1.0), ((18, 12), 0.1),
            ((23, 27), 1.0), ((18, 16), 0.1), ((18, 16), 1.0), ((20, 16), 0.1), ((256,), 1.0), ((64,), 0.1),
            ((128,), 1.0), ((96,), 0.1), ((128,), 1.0), ((128,), 0.1)]
    return [GridCase({0: alpha}, [], [nc(*m)]) for m, alpha in rows]


@grid("Exp", "Log")
def exp_log(name: str) -> list:
    params = [(-1.0, 1.0, 0.0), (-1.0, 0.75, -0.25 if name == "Exp" else 0.25), (2.0, 0.5, 0.125)] * 2 + [
        (-1.0, 1.0, 0.0), (-1.0, 1.25, 0.5), (2.0, 0.75, -0.5 if name == "Exp" else 0.25),
        (-1.0, 1.0, 0.0), (-1.0, 0.5, 0.25), (2.0, 1.5, -0.75 if name == "Exp" else 0.125)]
    lo, hi = (-1.0, 1.0) if name == "Exp" else (0.001, 2.0)  # Log's inputs are positive
    return [GridCase({0: b, 1: sc, 2: sh}, [], [_uniform(name, i, s, lo, hi)])
            for i, (s, (b, sc, sh)) in enumerate(zip(COMMON, params))]


@grid("Power")
def power(name: str) -> list:
    shapes = COMMON[:6] + [nc(15, 24), nc(19, 12), nc(17, 15)] + COMMON[9:]
    return [GridCase({0: 1.1, 1: 1.5, 2: 2.0}, [], [s]) for s in shapes]


@grid("Threshold")
def threshold(name: str) -> list:
    cases = []
    for i, s in enumerate(COMMON[:3] + COMMON[3:]):
        for t in ((0.0, 0.3), (-0.1, 0.7), (-0.5, 1.1))[i % 3]:
            x = _uniform(name, len(cases), s, -1.2, 1.2)
            x[np.abs(x - t) < 0.01] = t + 0.05  # as ncnn's test: no value on the threshold
            cases.append(GridCase({0: t}, [], [x]))
    return cases


@grid("Shrink")
def shrink(name: str) -> list:
    rows = [((12, 24, 8, 3), 0.0, 5.0), ((9, 7, 16, 4), 0.3, 0.3), ((6, 9, 4, 3), 4.5, 6.1),
            ((12, 6, 24), 0.0, 5.0), ((7, 8, 24), 0.3, 0.3), ((3, 4, 5), 4.5, 6.1),
            ((5, 7), 0.0, 0.3), ((7, 9), 4.0, 4.0), ((3, 5), 2.0, 4.0),
            ((25,), 0.0, 0.3), ((63,), 4.0, 4.0), ((1024,), 2.0, 4.0)]
    return [GridCase({0: b, 1: lam}, [], [nc(*m)]) for m, b, lam in rows]


@grid("PReLU")
def prelu(name: str) -> list:
    mats = [nc(5, 7, 24), nc(5, 7, 32), nc(7, 9, 12), nc(3, 5, 13), nc(15, 24), nc(15, 32), nc(17, 12),
            nc(19, 15), nc(128), nc(124), nc(120), nc(127), nc(5, 3, 2, 24), nc(3, 5, 3, 13)]
    return [GridCase({0: n}, None, [m]) for m in mats for n in (m[0], 1)]


@grid("Dropout")
def dropout(name: str) -> list:
    rows = [((5, 6, 7, 24), 1.0), ((5, 6, 7, 24), 0.2), ((7, 8, 9, 12), 0.3), ((3, 4, 5, 13), 0.5),
            ((5, 7, 24), 1.0), ((5, 7, 24), 0.2), ((7, 9, 12), 1.0), ((7, 9, 12), 0.3), ((3, 5, 13), 1.0),
            ((3, 5, 13), 0.5), ((15, 24), 1.0), ((15, 24), 0.6), ((19, 12), 1.0), ((19, 12), 0.4),
            ((17, 15), 1.0), ((17, 15), 0.7), ((128,), 1.0), ((128,), 0.4), ((124,), 1.0), ((124,), 0.1),
            ((127,), 1.0), ((127,), 0.5)]
    return [GridCase({0: scale}, [], [nc(*m)]) for m, scale in rows]


@grid("Cast")
def cast(name: str) -> list:
    shapes = [nc(5, 6, 7, 16), nc(3, 4, 5, 13), nc(5, 7, 16), nc(3, 5, 13), nc(6, 16), nc(7, 15), nc(128), nc(127)]
    # ncnn's test also casts 2 -> 1, 1 -> 4 and 4 -> 1, feeding fp16/bf16 Mats in; a one-layer
    # .param only takes fp32 in, and pyncnn reads any 2-byte Mat back as fp16, so only
    # fp32 -> fp16 is comparable through the Python API
    return [GridCase({0: 1, 1: 2}, [], [s]) for s in shapes]
