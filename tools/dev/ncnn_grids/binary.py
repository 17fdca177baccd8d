"""BinaryOp (tests/test_binaryop.cpp and _1.._4, which split the op range), Eltwise and UnaryOp."""

from __future__ import annotations

import itertools

import numpy as np

from .registry import GridCase, case_rng, grid, nc

N_BINARY_OPS = 19
N_UNARY_OPS = 28
# fmod, floor_divide, remainder and their reverses jump at whole quotients: a quotient that
# lands on a step rounds either way between two correct implementations (ncnn's own SIMD
# and scalar paths included), so one stray element per case is allowed
STEP_OPS = (12, 13, 15, 16, 17, 18)


def _binary_operands(op: int, shapes: list, rng) -> list:
    """ncnn's test draws operands by op: positive for pow/rpow and div/rdiv, non-zero for atan2."""
    lo, hi = {6: (0.001, 2.0), 9: (0.001, 2.0), 3: (0.1, 10.0), 8: (0.1, 10.0)}.get(op, (-1.0, 1.0))
    out = [rng.uniform(lo, hi, size=s).astype(np.float32) for s in shapes]
    for x in out:
        x[x == 0] = 0.001
    return out


def _binary_shape_sets() -> list:
    """(a shapes list, with_scalar) pairs over ncnn's six shape groups, in its order."""
    sets = []
    for w in (31, 28, 24, 32):  # 1-D: w or 1
        mats = [nc(w), nc(1)]
        sets += [[a, b] for a in mats for b in mats] + [[a] for a in mats]
    for w, h in zip((13, 14, 15, 16), (31, 28, 24, 32)):
        mats = [nc(bw, bh) for bw in (w, 1) for bh in (h, 1)]
        sets += [[a, b] for a in mats for b in mats] + [[a] for a in mats]
    for w, h, c in zip((7, 6, 5, 4), (3, 4, 5, 6), (31, 28, 24, 32)):
        mats = [nc(bw, bh, bc) for bw in (w, 1) for bh in (h, 1) for bc in (c, 1)]
        sets += [[a, b] for a in mats for b in mats] + [[a] for a in mats]
    for w, h, d, c in zip((2, 3, 4, 5), (7, 6, 5, 4), (3, 4, 5, 6), (31, 28, 24, 32)):
        mats = [nc(bw, bh, bd, bc) for bw in (w, 1) for bh in (h, 1) for bd in (d, 1) for bc in (c, 1)]
        sets += [[a, b] for a in mats for b in mats] + [[a] for a in mats]
    for w, h, d, c in zip((2, 3, 4, 5), (7, 6, 5, 4), (3, 4, 5, 6), (31, 28, 24, 32)):
        mats = [nc(c), nc(d, c), nc(h, d, c), nc(w, h, d, c)]  # ranks broadcast against each other
        sets += [[a, b] for a, b in itertools.permutations(mats, 2)]
    for w, h, d, c in zip((16, 12, 16, 15), (15, 16, 15, 12), (12, 14, 12, 16), (31, 28, 24, 32)):
        for m in (nc(d, c), nc(h, d, c), nc(w, h, d, c), nc(c, c), nc(c, d, c), nc(c, h, d, c)):
            sets += [[m, (m[-1],)], [(m[-1],), m]]  # a vector as long as the last axis, either side
    return sets


@grid("BinaryOp")
def binaryop(name: str) -> list:
    cases = []
    shape_sets = _binary_shape_sets()
    for op in range(N_BINARY_OPS):
        stray = 1 if op in STEP_OPS else 0
        for shapes in shape_sets:
            rng = case_rng(name, len(cases))
            ins = _binary_operands(op, shapes, rng)
            if len(shapes) == 1:
                b = float(rng.uniform(0.001, 2.0)) if op in (6, 9) else 0.2
                cases.append(GridCase({0: op, 1: 1, 2: b}, [], ins, tol=1e-3, stray=stray))
            else:
                cases.append(GridCase({0: op, 1: 0, 2: 0.0}, [], ins, tol=1e-3, stray=stray))
    return cases


@grid("Eltwise")
def eltwise(name: str) -> list:
    groups = [(nc(16, 12, 12), 2), (nc(15, 11, 24), 2), (nc(9, 5, 7), 2), (nc(15, 11, 16), 3), (nc(7, 3, 5), 4),
              (nc(12, 4, 16), 5), (nc(16, 12), 2), (nc(11, 24), 2), (nc(9, 7), 2), (nc(15, 16), 3), (nc(7, 5), 4),
              (nc(12, 16), 5), (nc(12), 2), (nc(24), 2), (nc(19), 2), (nc(36), 3), (nc(15), 4), (nc(16), 5),
              (nc(31, 5, 3, 12), 2), (nc(32, 4, 5, 32), 3), (nc(33, 6, 7, 7), 4)]
    cases = []
    for shape, n in groups:
        for with_coeffs in (False, True):
            for op in (0, 1, 2):
                params = {0: op}
                if with_coeffs:
                    params[1] = [float(v) for v in case_rng(name, len(cases)).uniform(-1.2, 1.2, n)]
                cases.append(GridCase(params, [], [shape] * n))
    return cases


def _unary_input(op: int, shape: tuple, rng) -> np.ndarray:
    """ncnn's test reshapes the inputs by op: wide for floor/ceil, in each function's domain."""
    ranges = {5: (0.001, 2.0), 6: (0.001, 2.0), 8: (0.001, 2.0), 17: (0.001, 2.0), 25: (1.001, 2.0),
              11: (-1.0, 1.0), 12: (-1.0, 1.0), 13: (-1.0, 1.0), 26: (-0.99, 0.99), 27: (-0.999, 2.0)}
    lo, hi = ranges.get(op, (-1.2, 1.2))
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    return x * np.float32(1000) if op in (2, 3) else x


@grid("UnaryOp")
def unaryop(name: str) -> list:
    shapes = [nc(11, 3, 2, 16), nc(10, 2, 2, 12), nc(6, 1, 5, 13), nc(11, 7, 16), nc(10, 4, 12), nc(6, 5, 13),
              nc(12, 16), nc(10, 12), nc(14, 15), nc(128), nc(12), nc(15)]
    cases = []
    for op in range(N_UNARY_OPS):
        for s in shapes:
            cases.append(GridCase({0: op}, [], [_unary_input(op, s, case_rng(name, len(cases)))]))
    return cases
