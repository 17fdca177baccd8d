"""`<Layer>@long` fuzz cases: reductions over a long axis (65 .. 5000 elements).

The base generators keep every axis under ~20, so a GPU reduction (Softmax, the
normalisations, Reduction, global pooling, a matrix product's K loop) always fits in one
workgroup's first pass. Real models reduce over 1000 classes, 4096-wide hidden states and
64x64 planes: these draw one long axis (lengths around the powers of two that workgroup
and subgroup sizes are made of) and keep the others small, so the cases stay cheap.
"""

from __future__ import annotations

from .case import Case
from .draw import chance, extent, pick, tensor

LONG = (65, 127, 128, 129, 255, 256, 257, 511, 1000, 1023, 1025, 2048, 4097)


def _shape(rng, dims: int, long_axis: int) -> tuple:
    """A numpy shape of ncnn rank `dims` with axis `long_axis` long, the others 1..5."""
    return tuple(pick(rng, LONG) if i == long_axis else extent(rng, 1, 5) for i in range(dims))


def softmax(rng):
    d = int(rng.integers(1, 5))
    axis = int(rng.integers(0, d))
    long_axis = axis if chance(rng, 0.7) else int(rng.integers(0, d))
    return Case("Softmax", {0: axis, 1: 1}, [tensor(rng, _shape(rng, d, long_axis), -6.0, 6.0)], tol=2e-4)


def layernorm(rng):
    d = int(rng.integers(1, 4))
    shp = _shape(rng, d, d - 1)
    return Case("LayerNorm", {0: shp[-1], 1: pick(rng, (1e-5, 1e-6)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp, -3.0, 3.0)], tol=2e-4)


def rmsnorm(rng):
    d = int(rng.integers(1, 4))
    shp = _shape(rng, d, d - 1)
    return Case("RMSNorm", {0: shp[-1], 1: 1e-6, 2: int(rng.integers(0, 2))}, [tensor(rng, shp)], tol=2e-4)


def reduction(rng):
    d = int(rng.integers(1, 5))
    long_axis = int(rng.integers(0, d))
    op = int(rng.integers(0, 11))
    lo = 0.1 if op == 9 else -1.5
    # sum of squares / exp sums over thousands of values: fp16 storage of the result only
    p = {0: op, 1: 0, 3: [long_axis], 4: int(rng.integers(0, 2)), 5: 1}
    if op in (3, 8, 10) or chance(rng, 0.3):  # mean-like or a plain reduce-all
        p = {0: op, 1: 1, 4: int(rng.integers(0, 2)), 5: 1} if chance(rng, 0.3) else p
    return Case("Reduction", p, [tensor(rng, _shape(rng, d, long_axis), lo, 1.5)], tol=5e-4, tol16=2e-2)


def groupnorm(rng):
    c = pick(rng, (4, 8, 16, 32, 64))
    g = pick(rng, [k for k in (1, 2, 4, 8, 32) if c % k == 0])
    h, w = pick(rng, ((40, 40), (64, 17), (1, 1025), (33, 31)))
    return Case("GroupNorm", {0: g, 1: c, 2: 1e-5, 3: int(rng.integers(0, 2))},
                [tensor(rng, (c, h, w))], tol=2e-4)


def instancenorm(rng):
    c = pick(rng, (1, 3, 8, 16))
    h, w = pick(rng, ((40, 40), (64, 17), (1, 1025), (33, 31)))
    return Case("InstanceNorm", {0: c, 1: 1e-5, 2: int(rng.integers(0, 2))}, [tensor(rng, (c, h, w))], tol=2e-4)


def pooling(rng):
    c = pick(rng, (1, 3, 8, 12, 33))
    h, w = pick(rng, ((64, 64), (40, 41), (1, 1025), (17, 129)))
    p = {0: int(rng.integers(0, 2)), 4: 1}
    if chance(rng, 0.3):  # adaptive to a few bins, each over a long window
        p = {0: p[0], 7: 1, 8: extent(rng, 1, 3), 18: extent(rng, 1, 3)}
    return Case("Pooling", p, [tensor(rng, (c, h, w))], tol=2e-4)


def innerproduct(rng):
    n_in, n_out = pick(rng, LONG), pick(rng, (1, 5, 10, 33))
    shp = pick(rng, ((n_in,), (extent(rng, 1, 4), n_in)))
    p = {0: n_out, 1: int(chance(rng, 0.7)), 2: n_out * n_in}
    return Case("InnerProduct", p, [tensor(rng, shp)], tol=2e-4, tol16=2e-2)


def matmul(rng):
    k = pick(rng, LONG)
    a, b = (extent(rng, 1, 9), k), (k, extent(rng, 1, 9))
    return Case("MatMul", {}, [tensor(rng, a, -0.5, 0.5), tensor(rng, b, -0.5, 0.5)], tol=2e-4, tol16=2e-2)


GENERATORS = {
    "Softmax@long": softmax,
    "LayerNorm@long": layernorm,
    "RMSNorm@long": rmsnorm,
    "Reduction@long": reduction,
    "GroupNorm@long": groupnorm,
    "InstanceNorm@long": instancenorm,
    "Pooling@long": pooling,
    "InnerProduct@long": innerproduct,
    "MatMul@long": matmul,
}
