"""Fuzz cases for the arithmetic layers: BinaryOp, UnaryOp, Eltwise, activations,
normalisations, Softmax, Reduction, attention (MultiHeadAttention, SDPA), RMSNorm,
RotaryEmbed."""

from __future__ import annotations

import numpy as np

from vkncnn.tools.layer_fuzz import Case
from vkncnn.tools.layer_fuzz_draw import chance, channels, extent, floats, pick, shape, tensor


def _dims(rng, lo: int = 1, hi: int = 4) -> int:
    return int(rng.integers(lo, hi + 1))


def _binary_pair(rng):
    """(a shape, b shape) in a pairing ncnn's broadcasting accepts (binaryop-broadcasting.md)."""
    d = _dims(rng)
    a = shape(rng, d, 1, 7)
    kind = int(rng.integers(0, 5))
    if kind == 0:
        b = a
    elif kind == 1:  # same rank, 1 on some axes
        b = tuple(1 if chance(rng, 0.5) else n for n in a)
    elif kind == 2:  # lower rank, a prefix of a's numpy shape (ncnn's outer axes)
        k = int(rng.integers(1, d + 1))
        b = a[:k]
    elif kind == 3:  # scalar-like blob
        b = (1,) * int(rng.integers(1, d + 1))
    else:  # legacy: 1-D b of a's w, numpy-style trailing
        b = (a[-1],)
    if chance(rng, 0.3):
        a, b = b, a
    return a, b


def binaryop(rng):
    op = int(rng.integers(0, 12))
    p = {0: op}
    positive = op in (6, 9)  # pow: a base of the right sign keeps results real
    lo = 0.1 if positive else -1.5
    if chance(rng, 0.25):
        p.update({1: 1, 2: floats(rng, 1, 0.2 if positive else -2.0, 2.0)[0]})
        return Case("BinaryOp", p, [tensor(rng, shape(rng, _dims(rng), 1, 9), lo, 1.5)])
    a, b = _binary_pair(rng)
    tol16 = 3e-2 if op in (3, 8, 6, 9) else 1e-2  # division and pow magnify the fp16 output rounding
    return Case("BinaryOp", p, [tensor(rng, a, lo, 1.5), tensor(rng, b, lo, 1.5)], tol16=tol16)


def unaryop(rng):
    op = int(rng.integers(0, 20))
    lo, hi = -1.5, 1.5
    if op in (5, 6, 8, 17):  # sqrt, rsqrt, log, log10: positive domain
        lo, hi = 0.1, 3.0
    if op in (12, 13):  # asin, acos
        lo, hi = -0.99, 0.99
    if op == 15:
        lo, hi = 0.2, 2.0
    return Case("UnaryOp", {0: op}, [tensor(rng, shape(rng, _dims(rng), 1, 9), lo, hi)],
                tol16=2e-2 if op in (6, 15, 11) else 1e-2)


def eltwise(rng):
    shp = shape(rng, _dims(rng), 1, 8)
    n = int(rng.integers(2, 5))
    op = int(rng.integers(0, 3))
    p = {0: op}
    if op == 1 and chance(rng, 0.6):
        p[1] = floats(rng, n, -2.0, 2.0)
    return Case("Eltwise", p, [tensor(rng, shp) for _ in range(n)])


def _act(name, params):
    def gen(rng):
        return Case(name, params(rng), [tensor(rng, shape(rng, _dims(rng), 1, 9), -3.0, 3.0)])
    return gen


ACTIVATIONS = {
    "ReLU": _act("ReLU", lambda r: {0: floats(r, 1, 0.0, 0.5)[0]} if chance(r, 0.5) else {}),
    "Clip": _act("Clip", lambda r: {0: floats(r, 1, -2.0, 0.0)[0], 1: floats(r, 1, 0.0, 2.0)[0]}),
    "ELU": _act("ELU", lambda r: {0: floats(r, 1, 0.1, 2.0)[0]}),
    "CELU": _act("CELU", lambda r: {0: floats(r, 1, 0.2, 2.0)[0]}),
    "SELU": _act("SELU", lambda r: {0: floats(r, 1, 1.0, 2.0)[0], 1: floats(r, 1, 0.5, 1.5)[0]}),
    "HardSigmoid": _act("HardSigmoid", lambda r: {0: floats(r, 1, 0.1, 0.4)[0], 1: floats(r, 1, 0.2, 0.7)[0]}),
    "HardSwish": _act("HardSwish", lambda r: {0: floats(r, 1, 0.1, 0.4)[0], 1: floats(r, 1, 0.2, 0.7)[0]}),
    "Sigmoid": _act("Sigmoid", lambda r: {}),
    "Swish": _act("Swish", lambda r: {}),
    "TanH": _act("TanH", lambda r: {}),
    "Mish": _act("Mish", lambda r: {}),
    "GELU": _act("GELU", lambda r: {0: int(r.integers(0, 2))}),
    "Softplus": _act("Softplus", lambda r: {}),
    "Erf": _act("Erf", lambda r: {}),
    "AbsVal": _act("AbsVal", lambda r: {}),
    "BNLL": _act("BNLL", lambda r: {}),
    "Shrink": _act("Shrink", lambda r: {0: floats(r, 1, -0.5, 0.5)[0], 1: floats(r, 1, 0.0, 1.0)[0]}),
    "Threshold": _act("Threshold", lambda r: {0: floats(r, 1, -1.0, 1.0)[0]}),
    "Exp": _act("Exp", lambda r: {0: pick(r, (-1.0, 2.0, 2.5)), 1: floats(r, 1, -1, 1)[0],
                                   2: floats(r, 1, -1, 1)[0]}),
    "Power": _act("Power", lambda r: {0: pick(r, (1.0, 2.0, 3.0)), 1: floats(r, 1, -1, 1)[0],
                                       2: floats(r, 1, -1, 1)[0]}),
}


def log_(rng):
    p = {0: pick(rng, (-1.0, 2.0, 10.0)), 1: floats(rng, 1, 0.5, 1.5)[0], 2: floats(rng, 1, 0.0, 0.5)[0]}
    return Case("Log", p, [tensor(rng, shape(rng, _dims(rng), 1, 9), 0.2, 3.0)])


def prelu(rng):
    d = _dims(rng)
    shp = shape(rng, d, 1, 8)
    n = {1: shp[0], 2: shp[0], 3: shp[0], 4: shp[0]}[d] if chance(rng, 0.7) else 1
    return Case("PReLU", {0: n}, [tensor(rng, shp)])


def _axis_extent(shp):
    """The extent of ncnn's per-channel axis: w (1-D), h (2-D), c (3-D/4-D)."""
    return shp[0]


def batchnorm(rng):
    shp = shape(rng, _dims(rng), 1, 8)
    return Case("BatchNorm", {0: _axis_extent(shp), 1: pick(rng, (0.0, 1e-5, 1e-3))}, [tensor(rng, shp)])


def scale(rng):
    shp = shape(rng, _dims(rng), 1, 8)
    return Case("Scale", {0: _axis_extent(shp), 1: int(rng.integers(0, 2))}, [tensor(rng, shp)])


def softmax(rng):
    d = _dims(rng)
    shp = shape(rng, d, 1, 8)
    axis = int(rng.integers(0, d))
    return Case("Softmax", {0: axis - d if chance(rng, 0.3) else axis, 1: 1},
                [tensor(rng, shp, -4.0, 4.0)])


def layernorm(rng):
    d = _dims(rng)
    shp = shape(rng, d, 1, 8)
    size = shp[-1] if d == 1 or chance(rng, 0.6) else int(np.prod(shp[-2:])) if d >= 2 else shp[-1]
    if d == 2 and size != shp[-1]:
        size = shp[-1]
    if d == 4 and size != shp[-1] and chance(rng, 0.5):
        size = int(np.prod(shp[-3:]))
    return Case("LayerNorm", {0: size, 1: pick(rng, (1e-5, 1e-3)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def rmsnorm(rng):
    d = _dims(rng)
    shp = shape(rng, d, 1, 8)
    size = shp[-1] if d <= 2 or chance(rng, 0.6) else int(np.prod(shp[-2:]))
    return Case("RMSNorm", {0: size, 1: pick(rng, (1e-6, 1e-3)), 2: int(rng.integers(0, 2))},
                [tensor(rng, shp)])


def groupnorm(rng):
    d = _dims(rng)
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


def reduction(rng):
    d = _dims(rng)
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
