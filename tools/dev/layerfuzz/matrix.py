"""Fuzz cases for the matrix products: InnerProduct, Gemm, MatMul, Einsum.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import activation, chance, extent, floats, pick, shape, tensor


def innerproduct(rng):
    dims = int(rng.integers(1, 5))
    shp = shape(rng, dims, 1, 6)
    outc = pick(rng, (1, 3, 4, 5, 8, 12, 16, 24, 33))
    n_in = int(np.prod(shp)) if dims != 2 else shp[1]
    p = {0: outc, 1: int(chance(rng, 0.7)), 2: outc * n_in}
    p.update(activation(rng))
    if chance(rng, 0.1):
        p[8] = 1
        return Case("InnerProduct", p, [tensor(rng, shp)], tol=2e-2, tol16=3e-2)
    return Case("InnerProduct", p, [tensor(rng, shp)])


def gemm(rng):
    M, N, K = extent(rng, 1, 17), extent(rng, 1, 17), extent(rng, 1, 19)
    ta, tb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    ca, cb = chance(rng, 0.25), chance(rng, 0.4)
    p = {2: ta, 3: tb}
    if chance(rng, 0.5):
        p[0] = floats(rng, 1, -2.0, 2.0)[0]
    if chance(rng, 0.5):
        p[1] = floats(rng, 1, -2.0, 2.0)[0]
    ins = []
    if ca:
        p.update({4: 1, 7: M, 9: K})
    else:
        ins.append(tensor(rng, (K, M) if ta else (M, K)))
    if cb:
        p.update({5: 1, 8: N, 9: K})
    else:
        ins.append(tensor(rng, (N, K) if tb else (K, N)))
    ctype = pick(rng, (-1, 0, 1, 2, 3, 4))
    c_shapes = {0: (1,), 1: (M,), 2: (M, 1), 3: (M, N), 4: (1, N)}
    if ca and cb:
        cc = True  # ncnn needs a constant C (or none) when both A and B are constant
    else:
        cc = chance(rng, 0.5)
    if cc:
        p.update({6: 1, 10: ctype, 7: M, 8: N})
    elif ctype >= 0:
        shp = c_shapes[ctype]
        if ctype == 4 and chance(rng, 0.5):
            shp = (N,)
        ins.append(tensor(rng, shp))
    if chance(rng, 0.2):
        p[11] = 1  # output_N1M
    if chance(rng, 0.2):
        p[14] = 1  # output_transpose
    if not ins:
        return None  # ncnn needs at least one blob in
    return Case("Gemm", p, ins)


def matmul(rng):
    """Every rank pairing 1-4 x 1-4; batch dims align from the right, numpy-style, 1s broadcast."""
    da, db = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    M, N, K = extent(rng, 1, 9), extent(rng, 1, 9), extent(rng, 1, 11)
    tb = int(rng.integers(0, 2))
    batch = [extent(rng, 1, 4) for _ in range(2)]

    def lead(rank):
        return tuple(pick(rng, (b, b, 1)) for b in batch[len(batch) - (rank - 2):]) if rank > 2 else ()

    a = (K,) if da == 1 else lead(da) + (M, K)
    b = (K,) if db == 1 else lead(db) + ((N, K) if tb else (K, N))
    return Case("MatMul", {0: tb} if tb else {}, [tensor(rng, a), tensor(rng, b)])


_EINSUM = [  # (equation, letter sizes in use)
    "ii", "ii->i", "i,i->i", "ij->i", "ij->ij", "ik,kj->ij", "ik,jk->ij", "i,j->ij", "ijk->ij", "ijk->i",
    "imn,jmn->ij", "ijm,ijm->ij", "ijm,imk->ijk", "ijkl->ijkl", "ijkm,ijlm->ijkl", "ijk,k->ijk",
    "im,mn,nj->ij", "ijx,x->ij",
]


def einsum(rng):
    eq = pick(rng, _EINSUM)
    sizes = {c: extent(rng, 1, 7) for c in "ijklmnx"}
    terms = eq.split("->")[0].split(",")
    if eq == "ii":
        terms = ["ii"]
    ins = [tensor(rng, tuple(sizes[c] for c in t)) for t in terms]
    return Case("Einsum", {0: [ord(c) for c in eq]}, ins, tol=2e-4)
