"""Fuzz cases for the normalisations: BatchNorm, Scale, Softmax, LayerNorm, RMSNorm,
GroupNorm, InstanceNorm, Normalize, MVN, LRN.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import chance, channels, dims, extent, floats, pick, shape, tensor


def _axis_extent(shp):
    """The extent of ncnn's per-channel axis: w (1-D), h (2-D), c (3-D/4-D)."""
    return shp[0]


def batchnorm(rng):
    shp = shape(rng, dims(rng), 1, 8)
    return Case("BatchNorm", {0: _axis_extent(shp), 1: pick(rng, (0.0, 1e-5, 1e-3))}, [tensor(rng, shp)])


def scale(rng):
    shp = shape(rng, dims(rng), 1, 8)
    return Case("Scale", {0: _axis_extent(shp), 1: int(rng.integers(0, 2))}, [tensor(rng, shp)])


def softmax(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 8)
    axis = int(rng.integers(0, d))
    return Case("Softmax", {0: axis - d if chance(rng, 0.3) else axis, 1: 1},
                [tensor(rng, shp, -4.0, 4.0)])


def layernorm(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 8)
    size = shp[-1] if d == 1 or chance(rng, 0.6) else int(np.prod(shp[-2:])) if d >= 2 else shp[-1]
    if d == 2 and size != shp[-1]:
        size = shp[-1]
    if d == 4 and size != shp[-1] and chance(rng, 0.5):
        size = int(np.prod(shp[-3:]))
    return Case("LayerNorm", {0: size, 1: pick(rng, (1e-5, 1e-3)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def rmsnorm(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 8)
    size = shp[-1] if d <= 2 or chance(rng, 0.6) else int(np.prod(shp[-2:]))
    return Case("RMSNorm", {0: size, 1: pick(rng, (1e-6, 1e-3)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def groupnorm(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 7)
    c = shp[0]
    g = pick(rng, [k for k in range(1, c + 1) if c % k == 0])
    return Case("GroupNorm", {0: g, 1: c, 2: pick(rng, (1e-5, 1e-3)), 3: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def instancenorm(rng):
    shp = (channels(rng), extent(rng, 1, 8), extent(rng, 1, 8))
    return Case("InstanceNorm", {0: shp[0], 1: pick(rng, (1e-5, 1e-3)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def normalize(rng):
    shp = (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7))
    shared = int(rng.integers(0, 2))
    p = {0: int(rng.integers(0, 2)), 1: shared, 2: pick(rng, (1e-4, 1e-2)),
         3: 1 if shared else shp[0], 4: int(rng.integers(0, 2)), 9: int(rng.integers(0, 3))}
    return Case("Normalize", p, [tensor(rng, shp)])


def mvn(rng):
    shp = (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7))
    p = {0: int(rng.integers(0, 2)), 1: int(rng.integers(0, 2)), 2: pick(rng, (1e-4, 1e-2))}
    return Case("MVN", p, [tensor(rng, shp)])


def lrn(rng):
    shp = (channels(rng), extent(rng, 1, 8), extent(rng, 1, 8))
    p = {0: int(rng.integers(0, 2)), 1: pick(rng, (1, 3, 5)), 2: floats(rng, 1, 1e-4, 1.0)[0],
         3: pick(rng, (0.75, 0.5)), 4: pick(rng, (1.0, 2.0))}
    return Case("LRN", p, [tensor(rng, shp)])
