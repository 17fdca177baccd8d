"""Fuzz cases for attention: MultiHeadAttention, SDPA, RotaryEmbed.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import chance, channels, extent, floats, pick, tensor


def multiheadattention(rng):
    heads = pick(rng, (1, 2, 3, 4))
    embed = heads * pick(rng, (1, 2, 4, 5, 8))
    qdim = pick(rng, (embed, embed, channels(rng)))
    kdim, vdim = (pick(rng, (embed, channels(rng))) for _ in range(2))
    seq_q, seq_k = extent(rng, 1, 9), extent(rng, 1, 9)
    p = {0: embed, 1: heads, 2: embed * qdim, 3: kdim, 4: vdim}
    if chance(rng, 0.3):
        p[6] = floats(rng, 1, 0.1, 1.0)[0]
    q = tensor(rng, (seq_q, qdim))
    form = int(rng.integers(0, 3))
    if form == 0 and kdim == qdim and vdim == qdim:
        ins = [q]  # self-attention: one input is q, k and v
        seq_k = seq_q
    elif form == 1 and vdim == kdim:
        ins = [q, tensor(rng, (seq_k, kdim))]  # k and v the same blob
    else:
        ins = [q, tensor(rng, (seq_k, kdim)), tensor(rng, (seq_k, vdim))]
    if chance(rng, 0.3):
        p[5] = 1
        mask = tensor(rng, (seq_q, seq_k), -2.0, 0.0)
        if len(ins) < 3:
            return None  # ncnn reads the mask as the last of q, k, v, mask
        ins.append(mask)
    return Case("MultiHeadAttention", p, ins, tol=2e-4)


def sdpa(rng):
    heads = pick(rng, (1, 2, 4, 6))
    groups = pick(rng, [g for g in (1, 2, 3, 6) if heads % g == 0])
    dk, dv = extent(rng, 1, 17), extent(rng, 1, 17)
    src, cur = extent(rng, 1, 9), extent(rng, 1, 9)
    ins = [tensor(rng, (heads, src, dk)), tensor(rng, (groups, cur, dk)), tensor(rng, (groups, cur, dv))]
    p = {}
    if chance(rng, 0.4):
        p[6] = floats(rng, 1, 0.1, 1.0)[0]
    if chance(rng, 0.4):
        p[5] = 1
        ins.append(tensor(rng, (src, cur), -3.0, 0.0))
    return Case("SDPA", p, ins, tol=2e-4)


def rotaryembed(rng):
    heads, seq, half = extent(rng, 1, 5), extent(rng, 1, 9), extent(rng, 1, 9)
    x = tensor(rng, (heads, seq, 2 * half))
    ang = rng.uniform(0, 6.28, (seq, half))
    cos = np.cos(ang).astype(np.float16).astype(np.float32)
    sin = np.sin(ang).astype(np.float16).astype(np.float32)
    return Case("RotaryEmbed", {0: int(rng.integers(0, 2))}, [x, cos, sin])
