"""Normalisations and Softmax: InstanceNorm, LayerNorm, GroupNorm, BatchNorm, RMSNorm, Softmax
(ncnn's tests/test_<layer>.cpp)."""

from __future__ import annotations

from .registry import GridCase, grid, nc

# LayerNorm / RMSNorm share their grids: (ncnn mat, affine_size, eps)
_LN_3D = [((6, 4, 2), 6, 0.01), ((4, 5, 6), 4, 0.01), ((3, 3, 8), 3, 0.002), ((5, 6, 12), 5, 0.02),
          ((4, 7, 16), 4, 0.02), ((6, 7, 24), 6, 0.001), ((5, 8, 32), 5, 0.001)]
_LN_3D_PLANE = [((6, 4, 2), 24, 0.01), ((4, 5, 6), 20, 0.01), ((3, 3, 8), 9, 0.002), ((5, 6, 12), 30, 0.02),
                ((4, 7, 16), 28, 0.02), ((6, 7, 24), 42, 0.001), ((5, 8, 32), 40, 0.001)]
_LN_2D = [((4, 2), 4, 0.01), ((5, 6), 5, 0.01), ((3, 8), 3, 0.002), ((6, 12), 6, 0.02), ((4, 16), 4, 0.02),
          ((7, 24), 7, 0.001), ((8, 32), 8, 0.001)]
_LN_1D = [((n,), n, eps) for n, eps in ((2, 0.01), (6, 0.01), (8, 0.002), (12, 0.02), (16, 0.02), (24, 0.001),
                                         (32, 0.001))]
_LN_4D = [((5, 3, 2, 8), 5, 0.01, 0), ((4, 3, 2, 5), 4, 0.01, 1), ((5, 3, 2, 8), 15, 0.002, 0),
          ((4, 3, 2, 5), 12, 0.002, 1), ((5, 3, 2, 8), 30, 0.001, 0), ((4, 3, 2, 5), 24, 0.001, 1)]


def _affine_size_grid(name: str) -> list:
    cases = []
    for rows in (_LN_3D, _LN_3D_PLANE, _LN_2D, _LN_1D):
        for affine in (0, 1):
            cases += [GridCase({0: size, 1: eps, 2: affine}, None, [nc(*m)]) for m, size, eps in rows]
    cases += [GridCase({0: size, 1: eps, 2: affine}, None, [nc(*m)]) for m, size, eps, affine in _LN_4D]
    return cases


@grid("LayerNorm", "RMSNorm")
def layernorm(name: str) -> list:
    return _affine_size_grid(name)


@grid("InstanceNorm")
def instancenorm(name: str) -> list:
    rows = [((6, 4, 2), 0.01), ((3, 3, 12), 0.002), ((5, 7, 16), 0.02)]
    rows4 = [((5, 4, 3, 3), 0.01), ((3, 3, 2, 8), 0.002)]
    cases = []
    for group in (rows, rows4):
        for affine in (0, 1):
            for m, eps in group:
                shape = nc(*m)
                # ncnn's test gives channels 0 when affine is off: the input then says how many
                cases.append(GridCase({0: shape[0] if affine else 0, 1: eps, 2: affine}, None, [shape],
                                      edge=not affine))
    return cases


@grid("GroupNorm")
def groupnorm(name: str) -> list:
    groups_eps = [(1, 0.01), (2, 0.002), (3, 0.01), (4, 0.02), (2, 0.001), (3, 0.0001)]
    mats = [[nc(3, 6, 4, 2), nc(2, 3, 3, 8), nc(3, 4, 5, 6), nc(4, 5, 6, 12), nc(5, 6, 7, 24), nc(2, 8, 9, 24)],
            [nc(6, 4, 2), nc(3, 3, 8), nc(4, 5, 6), nc(5, 6, 12), nc(6, 7, 24), nc(8, 9, 24)],
            [nc(24, 2), nc(23, 8), nc(25, 6), nc(26, 12), nc(27, 24), nc(29, 24)],
            [nc(12), nc(18), nc(36), nc(212), nc(124), nc(324)]]
    cases = []
    for row in mats:
        for affine in (0, 1):
            for shape, (group, eps) in zip(row, groups_eps):
                channels = shape[0]  # w for 1-D, h for 2-D, c otherwise: numpy's first axis each time
                cases.append(GridCase({0: group, 1: channels, 2: eps, 3: affine}, None, [shape]))
    return cases


@grid("BatchNorm")
def batchnorm(name: str) -> list:
    rows = [((5, 6, 7, 24), 0.0), ((5, 6, 7, 24), 0.01), ((7, 8, 9, 12), 0.0), ((7, 8, 9, 12), 0.001),
            ((3, 4, 5, 13), 0.0), ((3, 4, 5, 13), 0.0), ((3, 4, 6, 32), 0.0), ((3, 4, 5, 32), 0.001),
            ((5, 7, 24), 0.0), ((5, 7, 24), 0.01), ((7, 9, 12), 0.0), ((7, 9, 12), 0.001), ((3, 5, 13), 0.0),
            ((3, 5, 13), 0.001), ((3, 5, 16), 0.001), ((3, 5, 32), 0.001),
            ((15, 24), 0.0), ((15, 24), 0.01), ((17, 12), 0.0), ((17, 12), 0.001), ((19, 15), 0.0),
            ((19, 15), 0.001), ((128, 16), 0.0), ((16, 128), 0.001),
            ((128,), 0.0), ((128,), 0.001), ((124,), 0.0), ((124,), 0.1), ((127,), 0.0), ((127,), 0.1)]
    # variances come positive from the seeded weights (as ncnn's test draws them in [0.001, 2])
    return [GridCase({0: nc(*m)[0], 1: eps}, None, [nc(*m)]) for m, eps in rows]


@grid("Softmax")
def softmax(name: str) -> list:
    mats = [nc(23, 25, 27, 32), nc(21, 22, 19, 40), nc(24, 27, 29, 28), nc(25, 23, 25, 31),
            nc(25, 27, 32), nc(22, 19, 40), nc(27, 29, 28), nc(23, 25, 31),
            nc(125, 32), nc(147, 40), nc(127, 28), nc(129, 31),
            nc(128), nc(120), nc(124), nc(127)]
    return [GridCase({0: axis, 1: 1}, [], [m]) for m in mats for axis in range(-len(m), len(m))]
