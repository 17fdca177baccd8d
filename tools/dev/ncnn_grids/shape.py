"""Shape layers: Squeeze, ExpandDims, Flatten, Permute, PixelShuffle, ShuffleChannel, Concat, Slice,
Split, Crop, Padding (ncnn's tests/test_<layer>.cpp; int8 variants left out)."""

from __future__ import annotations

import itertools

from .registry import GridCase, grid, nc

AXES_SETS = [[0], [1], [2], [3], [0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [0, 1, 2], [0, 1, 3], [0, 2, 3],
             [1, 2, 3], [0, 1, 2, 3]]

SQUEEZE_MATS = [nc(4, 5, 7, 16), nc(4, 5, 1, 15), nc(4, 1, 7, 12), nc(1, 5, 7, 16), nc(1, 5, 1, 15), nc(1, 1, 7, 12),
                nc(6, 1, 1, 16), nc(1, 1, 1, 15), nc(4, 5, 7, 1), nc(4, 5, 1, 1), nc(4, 1, 7, 1), nc(1, 5, 7, 1),
                nc(1, 5, 1, 1), nc(1, 1, 7, 1), nc(1, 1, 1, 1),
                nc(3, 12, 16), nc(3, 1, 16), nc(1, 33, 15), nc(1, 14, 1), nc(12, 13, 1), nc(1, 1, 1),
                nc(14, 16), nc(1, 14), nc(11, 1), nc(1, 1), nc(120), nc(1)]


@grid("Squeeze")
def squeeze(name: str) -> list:
    cases = []
    for shape in SQUEEZE_MATS:
        for w, h, d, c in itertools.product([0, 1], repeat=4):
            cases.append(GridCase({0: w, 1: h, 11: d, 2: c}, [], [shape]))
        for axes in AXES_SETS:
            # axes past the blob's rank are in ncnn's grid too: it ignores them
            cases.append(GridCase({3: axes}, [], [shape], edge=max(axes) >= len(shape)))
    return cases


@grid("ExpandDims")
def expanddims(name: str) -> list:
    mats = [nc(3, 12, 16), nc(3, 1, 16), nc(1, 33, 15), nc(1, 14, 1), nc(12, 13, 1), nc(1, 1, 1),
            nc(14, 16), nc(1, 14), nc(11, 1), nc(1, 1), nc(120), nc(1)]
    cases = [GridCase({3: axes}, [], [shape]) for shape in mats for axes in AXES_SETS]
    cases += [GridCase({3: [a]}, [], [nc(3, 4, 5)]) for a in (-4, -3, -2, -1)]
    cases += [GridCase({3: axes}, [], [nc(3, 4)]) for axes in ([0, 1], [0, 3], [2, 3])]
    return cases


@grid("Flatten")
def flatten(name: str) -> list:
    mats = [nc(2, 3, 4, 4), nc(3, 5, 7, 8), nc(1, 1, 1, 16), nc(9, 10, 2, 16), nc(1, 7, 1, 1), nc(6, 6, 6, 15),
            nc(2, 4, 4), nc(3, 5, 8), nc(1, 1, 16), nc(9, 10, 16), nc(1, 7, 1), nc(6, 6, 15),
            nc(13, 13), nc(16, 16), nc(8, 12), nc(8, 2), nc(32), nc(17)]
    return [GridCase({}, [], [m]) for m in mats]


@grid("Permute")
def permute(name: str) -> list:
    cases = [GridCase({0: 0}, [], [m]) for m in (nc(128), nc(127))]
    groups = [([nc(12, 32), nc(8, 15), nc(11, 16), nc(7, 9)], 2),
              ([nc(8, 16, 32), nc(12, 8, 16), nc(7, 14, 12), nc(4, 4, 13), nc(1, 2, 7), nc(8, 5, 6)], 6),
              ([nc(8, 12, 16, 32), nc(12, 4, 8, 16), nc(7, 8, 14, 12), nc(4, 4, 4, 13), nc(1, 2, 3, 7),
                nc(8, 6, 5, 6)], 24)]
    for mats, n_orders in groups:
        cases += [GridCase({0: order}, [], [m]) for order in range(n_orders) for m in mats]
    return cases


@grid("PixelShuffle")
def pixelshuffle(name: str) -> list:
    rows = [((7, 7, 1), 1, 0), ((7, 7, 8), 2, 0), ((7, 7, 12), 2, 0), ((7, 7, 64), 4, 0), ((7, 7, 32), 2, 0),
            ((7, 7, 48), 2, 0), ((7, 7, 36), 3, 0), ((7, 7, 72), 3, 0), ((7, 7, 90), 3, 0),
            ((7, 7, 1), 1, 1), ((7, 7, 8), 2, 1), ((7, 7, 12), 2, 1), ((7, 7, 64), 4, 1), ((7, 7, 32), 2, 1),
            ((7, 7, 48), 2, 1), ((7, 7, 36), 3, 1), ((7, 7, 90), 3, 1),
            ((8, 3, 8), 2, 0), ((12, 3, 8), 2, 0), ((13, 3, 8), 2, 0), ((8, 3, 8), 2, 1), ((12, 3, 8), 2, 1),
            ((13, 3, 8), 2, 1), ((4, 3, 64), 4, 0), ((5, 3, 64), 4, 0), ((4, 3, 64), 4, 1), ((5, 3, 64), 4, 1)]
    return [GridCase({0: r, 1: mode}, [], [nc(*m)]) for m, r, mode in rows]


@grid("ShuffleChannel")
def shufflechannel(name: str) -> list:
    rows0 = [(3, 7, 1, 1), (5, 7, 2, 2), (3, 9, 3, 3), (5, 7, 4, 2), (3, 7, 12, 3), (5, 9, 12, 4), (3, 7, 12, 6),
             (5, 7, 15, 3), (3, 9, 15, 5), (5, 7, 16, 2), (5, 9, 16, 4), (3, 7, 16, 8)]
    tail0 = [(1, 1, 20, 2), (5, 7, 20, 2), (5, 7, 24, 2), (3, 7, 24, 3), (5, 9, 24, 4), (3, 7, 32, 2),
             (3, 7, 32, 8), (5, 7, 48, 2), (5, 7, 48, 3), (5, 9, 64, 4)]
    tail1 = [(1, 1, 20, 10), (5, 7, 20, 2), (5, 7, 24, 2), (3, 7, 24, 3), (5, 9, 24, 4), (3, 7, 32, 2),
             (3, 7, 32, 8), (5, 7, 48, 2), (5, 7, 48, 3), (3, 7, 64, 4)]
    cases = [GridCase({0: g, 1: rev}, [], [nc(w, h, c)])
             for rev, rows in ((0, rows0 + tail0), (1, rows0 + tail1)) for w, h, c, g in rows]
    for w, h, d, c, g, rev in [(5, 3, 2, 24, 2, 0), (3, 5, 3, 15, 3, 0), (5, 3, 2, 16, 8, 0), (5, 3, 2, 24, 2, 1),
                               (3, 5, 3, 15, 5, 1), (5, 3, 2, 16, 8, 1)]:
        cases.append(GridCase({0: g, 1: rev}, [], [nc(w, h, d, c)]))
    return cases


@grid("Concat")
def concat(name: str) -> list:
    cases = []

    def mixed(mats, axes):  # four inputs a[i], a[j], a[k], a[k] for every i, j, k
        for i, j, k in itertools.product(range(len(mats)), repeat=3):
            for axis in axes:
                cases.append(GridCase({0: axis}, [], [mats[i], mats[j], mats[k], mats[k]]))

    def same(mats, axes):  # three copies of each shape
        for m in mats:
            for axis in axes:
                cases.append(GridCase({0: axis}, [], [m, m, m]))

    mixed([nc(15, 5, 6, c) for c in (13, 20, 24, 48)], (0, -4))
    same([nc(15, 3, d, c) for d, c in ((15, 13), (16, 20), (17, 24), (18, 48))], (1, -3))
    same([nc(15, h, 6, c) for h, c in ((15, 13), (16, 20), (17, 24), (18, 48))], (2, -2))
    same([nc(w, 5, 7, c) for w, c in ((15, 13), (16, 20), (17, 24), (18, 48))], (3, -1))
    mixed([nc(15, 13, c) for c in (13, 20, 24, 48)], (0, -3))
    same([nc(15, h, c) for h, c in ((15, 13), (16, 20), (17, 24), (18, 48))], (1, -2))
    same([nc(w, 13, c) for w, c in ((15, 13), (16, 20), (17, 24), (18, 48))], (2, -1))
    mixed([nc(19, h) for h in (29, 44, 56, 80)], (0, -2))
    same([nc(w, h) for w, h in ((19, 29), (16, 44), (17, 56), (18, 80))], (1, -1))
    mixed([nc(w) for w in (29, 44, 56, 80)], (0, -1))
    return cases
