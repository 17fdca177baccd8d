"""Fuzz cases for pooling: Pooling, Pooling1D, Pooling3D, StatisticsPooling.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, channels, extent, tensor


def pooling(rng):
    c, h, w = channels(rng), extent(rng, 1, 12), extent(rng, 1, 12)
    p = {0: int(rng.integers(0, 2))}
    mode = int(rng.integers(0, 4))
    if mode == 0:
        p[4] = 1  # global
    elif mode == 1:
        p.update({7: 1, 8: extent(rng, 1, 6)})
        if chance(rng, 0.6):
            p[18] = extent(rng, 1, 6)
    else:
        kw = extent(rng, 1, 4)
        p.update({1: kw, 2: extent(rng, 1, 3)})
        if chance(rng, 0.4):
            p.update({11: extent(rng, 1, 4), 12: extent(rng, 1, 3)})
        kh = p.get(11, kw)
        p[5] = int(rng.integers(0, 4))
        pad = min(kw, kh) - 1
        if pad > 0 and chance(rng, 0.6):
            if chance(rng, 0.5):
                p[3] = int(rng.integers(0, pad + 1))
            else:
                p.update({3: int(rng.integers(0, pad + 1)), 14: int(rng.integers(0, pad + 1)),
                          13: int(rng.integers(0, pad + 1)), 15: int(rng.integers(0, pad + 1))})
        if p[0] == 1:
            p[6] = int(rng.integers(0, 2))
        h, w = max(h, kh), max(w, kw)
    x = tensor(rng, (c, h, w))
    if chance(rng, 0.1):  # a 2-D blob: one plane of h rows
        if h % 4 == 0:
            # x86 ncnn packs a 2-D blob's rows by 4 / 8 and then pools the packed rows as
            # channels: its shape and values depend on the packing (vkncnn: one plane)
            return None
        return Case("Pooling", p, [x[0]])
    return Case("Pooling", p, [x])


def pooling1d(rng):
    c, w = channels(rng), extent(rng, 1, 14)
    p = {0: int(rng.integers(0, 2))}
    mode = int(rng.integers(0, 3))
    if mode == 0:
        p[4] = 1
    elif mode == 1:
        p.update({7: 1, 8: extent(rng, 1, 6)})
    else:
        k = extent(rng, 1, 4)
        p.update({1: k, 2: extent(rng, 1, 3), 5: int(rng.integers(0, 4))})
        if k > 1 and chance(rng, 0.5):
            p[3] = int(rng.integers(0, k))
            if chance(rng, 0.5):
                p[14] = int(rng.integers(0, k))
        if p[0] == 1:
            p[6] = int(rng.integers(0, 2))
        w = max(w, k)
    return Case("Pooling1D", p, [tensor(rng, (c, w))])


def pooling3d(rng):
    c = channels(rng)
    dims = [extent(rng, 1, 7) for _ in range(3)]
    p = {0: int(rng.integers(0, 2))}
    mode = int(rng.integers(0, 3))
    if mode == 0:
        p[4] = 1
    elif mode == 1:
        p.update({7: 1, 8: extent(rng, 1, 4)})
        if chance(rng, 0.5):
            p.update({18: extent(rng, 1, 4), 28: extent(rng, 1, 4)})
    else:
        k = extent(rng, 1, 3)
        p.update({1: k, 2: extent(rng, 1, 2), 5: int(rng.integers(0, 4))})
        if k > 1 and chance(rng, 0.5):
            p[3] = int(rng.integers(0, k))
        if p[0] == 1:
            p[6] = int(rng.integers(0, 2))
        dims = [max(n, k) for n in dims]
    return Case("Pooling3D", p, [tensor(rng, (c, *dims))])


def statisticspooling(rng):
    return Case("StatisticsPooling", {0: int(rng.integers(0, 2))},
                [tensor(rng, (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7)))])
