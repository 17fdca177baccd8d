"""Fuzz cases for the element-wise arithmetic: BinaryOp (every broadcasting pairing ncnn
accepts), UnaryOp, Eltwise, Bias, Dropout.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, channels, dims, extent, floats, shape, tensor


def _binary_pair(rng):
    """(a shape, b shape) in a pairing ncnn's broadcasting accepts (binaryop-broadcasting.md)."""
    d = dims(rng)
    a = shape(rng, d, 1, 7)
    kind = int(rng.integers(0, 5))
    if kind == 0:
        b = a
    elif kind == 1:  # same rank, 1 on some axes
        b = tuple(1 if chance(rng, 0.5) else n for n in a)
    elif kind == 2:  # lower rank, a prefix of a's numpy shape (ncnn's outer axes)
        k = int(rng.integers(1, d + 1))
        b = a[:k]
    elif kind == 3:  # scalar-like blob
        b = (1,) * int(rng.integers(1, d + 1))
    else:  # legacy: 1-D b of a's w, numpy-style trailing
        b = (a[-1],)
    if chance(rng, 0.3):
        a, b = b, a
    return a, b


def binaryop(rng):
    op = int(rng.integers(0, 12))
    p = {0: op}
    positive = op in (6, 9)  # pow: a base of the right sign keeps results real
    lo = 0.1 if positive else -1.5
    if chance(rng, 0.25):
        p.update({1: 1, 2: floats(rng, 1, 0.2 if positive else -2.0, 2.0)[0]})
        return Case("BinaryOp", p, [tensor(rng, shape(rng, dims(rng), 1, 9), lo, 1.5)])
    a, b = _binary_pair(rng)
    tol16 = 3e-2 if op in (3, 8, 6, 9) else 1e-2  # division and pow magnify the fp16 output rounding
    return Case("BinaryOp", p, [tensor(rng, a, lo, 1.5), tensor(rng, b, lo, 1.5)], tol16=tol16)


def unaryop(rng):
    op = int(rng.integers(0, 20))
    lo, hi = -1.5, 1.5
    if op in (5, 6, 8, 17):  # sqrt, rsqrt, log, log10: positive domain
        lo, hi = 0.1, 3.0
    if op in (12, 13):  # asin, acos
        lo, hi = -0.99, 0.99
    if op == 15:
        lo, hi = 0.2, 2.0
    return Case("UnaryOp", {0: op}, [tensor(rng, shape(rng, dims(rng), 1, 9), lo, hi)],
                tol16=2e-2 if op in (6, 15, 11) else 1e-2)


def eltwise(rng):
    shp = shape(rng, dims(rng), 1, 8)
    n = int(rng.integers(2, 5))
    op = int(rng.integers(0, 3))
    p = {0: op}
    if op == 1 and chance(rng, 0.6):
        p[1] = floats(rng, n, -2.0, 2.0)
    return Case("Eltwise", p, [tensor(rng, shp) for _ in range(n)])


def bias(rng):
    shp = (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7))
    return Case("Bias", {0: shp[0]}, [tensor(rng, shp)])


def dropout(rng):
    return Case("Dropout", {0: floats(rng, 1, 0.1, 2.0)[0]} if chance(rng, 0.5) else {},
                [tensor(rng, shape(rng, dims(rng), 1, 8))])
