"""Attention: SDPA and MultiHeadAttention (ncnn's tests/test_sdpa.cpp, test_multiheadattention.cpp)."""

from __future__ import annotations

import math

from .registry import GridCase, grid, nc

# (q, k, v as ncnn RandomMat(w, h, c), attn_mask, scale)
SDPA_ROWS = [((32, 66, 8), (32, 66, 8), (20, 66, 8), 0, 0.0), ((26, 64, 8), (26, 61, 8), (18, 61, 8), 1, 0.0),
             ((40, 62, 7), (40, 61, 7), (24, 61, 7), 0, 0.0), ((24, 22, 6), (24, 19, 6), (16, 19, 6), 1, 0.0),
             ((64, 128, 12), (64, 128, 2), (64, 128, 2), 0, 0.0),
             ((64, 122, 12), (64, 127, 2), (48, 127, 2), 1, 0.0),
             ((44, 128, 4), (44, 123, 4), (55, 123, 4), 0, 1.0), ((12, 127, 4), (12, 127, 4), (55, 127, 4), 1, 1.0),
             ((28, 17, 15), (28, 127, 5), (32, 127, 5), 0, 0.1), ((28, 17, 15), (28, 32, 5), (11, 32, 5), 1, -0.4)]

# (q, k, v as ncnn RandomMat(w, h), embed_dim, num_heads, attn_mask)
MHA_ROWS = [((62, 66), (32, 66), (20, 66), 62, 2, 0), ((26, 64), (32, 64), (18, 64), 26, 2, 1),
            ((64, 128), (64, 128), (64, 128), 64, 4, 0), ((48, 127), (64, 127), (64, 127), 64, 16, 1),
            ((16, 128), (44, 128), (55, 128), 16, 2, 0), ((12, 128), (44, 127), (55, 127), 16, 4, 1),
            ((12, 17), (28, 127), (32, 127), 12, 3, 0), ((12, 17), (28, 32), (11, 32), 12, 3, 1)]
MHA_SAMEKV = [((64, 128), (64, 128), 64, 4), ((48, 127), (64, 127), 64, 16), ((16, 128), (44, 128), 16, 2),
              ((12, 128), (22, 127), 16, 4), ((12, 17), (28, 127), 12, 3), ((12, 17), (11, 32), 12, 3)]
MHA_SAMEQKV = [((64, 128), 64, 4), ((48, 127), 64, 8)]


@grid("SDPA")
def sdpa(name: str) -> list:
    cases = []
    for q, k, v, mask, scale in SDPA_ROWS:
        ins = [nc(*q), nc(*k), nc(*v)] + ([nc(k[1], q[1])] if mask else [])
        cases.append(GridCase({5: mask, 6: scale}, [], ins, tol=1e-3))
    return cases


@grid("MultiHeadAttention")
def multiheadattention(name: str) -> list:
    cases = []
    for q, k, v, embed, heads, mask in MHA_ROWS:
        params = {0: embed, 1: heads, 2: embed * q[0], 3: k[0], 4: v[0], 5: mask}
        ins = [nc(*q), nc(*k), nc(*v)] + ([nc(k[1], q[1])] if mask else [])
        cases.append(GridCase(params, None, ins, tol=5e-3))
    for q, kv, embed, heads in MHA_SAMEKV:
        params = {0: embed, 1: heads, 2: embed * q[0], 3: kv[0], 4: kv[0]}
        cases.append(GridCase(params, None, [nc(*q), nc(*kv)], tol=5e-3))
    for q, embed, heads in MHA_SAMEQKV:
        params = {0: embed, 1: heads, 2: embed * q[0], 3: q[0], 4: q[0], 6: 0.7 / math.sqrt(embed / heads)}
        cases.append(GridCase(params, None, [nc(*q)], tol=5e-3))
    return cases
