"""Fuzz cases for the reductions along axes: Reduction, CumulativeSum.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, dims, floats, shape, tensor


def reduction(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 7)
    op = int(rng.integers(0, 11))
    lo = 0.1 if op in (9,) else -1.5  # logsum: log of a positive sum
    p = {0: op, 2: floats(rng, 1, -2.0, 2.0)[0] if chance(rng, 0.3) else 1.0, 4: int(rng.integers(0, 2)), 5: 1}
    if chance(rng, 0.3):
        p[1] = 1
    else:
        p[1] = 0
        k = int(rng.integers(1, d + 1))
        axes = sorted(rng.choice(d, size=k, replace=False).tolist())
        p[3] = [a - d if chance(rng, 0.3) else a for a in axes]
    return Case("Reduction", p, [tensor(rng, shp, lo, 1.5)], tol=2e-4, tol16=2e-2)


def cumulativesum(rng):
    d = dims(rng)
    return Case("CumulativeSum", {0: int(rng.integers(-d, d))}, [tensor(rng, shape(rng, d, 1, 8))])
