"""Fuzz cases for the layers that resample a grid: Interp, GridSample.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, channels, extent, pick, shape, tensor


def interp(rng):
    d = pick(rng, (1, 2, 3, 3, 3, 4))
    shp = shape(rng, d, 1, 9)
    p = {0: int(rng.integers(1, 4))}
    if chance(rng, 0.3):
        p[6] = 1
    ins = [tensor(rng, shp)]
    how = int(rng.integers(0, 3))
    if how == 0:
        p[1] = pick(rng, (0.5, 1.0, 1.5, 2.0, 3.0, 0.75))
        p[2] = pick(rng, (0.5, 1.0, 1.5, 2.0, 3.0, 0.75))
        if d >= 2 and (int(shp[-1] * p[2]) < 1 or (d >= 3 and int(shp[-2] * p[1]) < 1)):
            return None
    elif how == 1:
        p[3], p[4] = extent(rng, 1, 15), extent(rng, 1, 15)
    else:
        if d != 3:
            return None
        p[5] = 1
        ins.append(tensor(rng, (1, extent(rng, 1, 15), extent(rng, 1, 15))))
    return Case("Interp", p, ins)


def gridsample(rng):
    c, h, w = channels(rng), extent(rng, 1, 8), extent(rng, 1, 8)
    oh, ow = extent(rng, 1, 7), extent(rng, 1, 7)
    p = {0: int(rng.integers(1, 4)), 1: int(rng.integers(1, 4)), 2: int(rng.integers(0, 2))}
    if chance(rng, 0.5):
        p[3] = 1
        grid = tensor(rng, (2, oh, ow), -1.2, 1.2)
    else:
        grid = tensor(rng, (oh, ow, 2), -1.2, 1.2)
    return Case("GridSample", p, [tensor(rng, (c, h, w)), grid], tol=2e-4, tol16=2e-2)
