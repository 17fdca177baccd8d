"""Fuzz cases for the less common layers: 1-D / 3-D convolutions and pooling, Unfold/Fold,
CumulativeSum, Diag, Flip, GLU, GridSample, CopyTo, Embed, StatisticsPooling, Dropout,
Bias, recurrent layers (RNN, GRU, LSTM)."""

from __future__ import annotations

import numpy as np

from vkncnn.tools.layer_fuzz import Case
from vkncnn.tools.layer_fuzz_draw import activation, chance, channels, deconv1d_cut, extent, floats, pick, shape, tensor


def _dims(rng, lo: int = 1, hi: int = 4) -> int:
    return int(rng.integers(lo, hi + 1))


def convolution1d(rng):
    inc, outc = channels(rng), channels(rng)
    k, dil, st = extent(rng, 1, 5), pick(rng, (1, 1, 2, 3)), pick(rng, (1, 1, 2, 3))
    p = {0: outc, 1: k, 2: dil, 3: st, 5: int(chance(rng, 0.7)), 6: outc * inc * k}
    pad = int(rng.integers(0, 4))
    if pad == 1:
        p[4] = int(rng.integers(0, 3))
    elif pad == 2:
        p.update({4: int(rng.integers(0, 3)), 15: int(rng.integers(0, 3))})
    elif pad == 3:
        p[4] = pick(rng, (-233, -234))
    if p.get(4, 0) and chance(rng, 0.4):
        p[18] = floats(rng, 1, -1, 1)[0]
    p.update(activation(rng))
    w = extent(rng, dil * (k - 1) + 1, dil * (k - 1) + 12)
    return Case("Convolution1D", p, [tensor(rng, (inc, w))])


def convolutiondepthwise1d(rng):
    inc = channels(rng)
    g = pick(rng, [d for d in range(1, inc + 1) if inc % d == 0])
    outc = g * pick(rng, (1, 2)) if g == inc else inc
    k, st = extent(rng, 1, 5), pick(rng, (1, 2))
    p = {0: outc, 1: k, 3: st, 5: int(chance(rng, 0.7)), 6: outc * (inc // g) * k, 7: g}
    if chance(rng, 0.5):
        p[4] = pick(rng, (1, 2, -233, -234))
    p.update(activation(rng))
    return Case("ConvolutionDepthWise1D", p, [tensor(rng, (inc, extent(rng, k, k + 10)))])


def deconvolution1d(rng):
    inc, outc = channels(rng), channels(rng)
    k, dil, st = extent(rng, 1, 4), pick(rng, (1, 2)), pick(rng, (1, 2, 3))
    p = {0: outc, 1: k, 2: dil, 3: st, 5: int(chance(rng, 0.7)), 6: outc * inc * k}
    w = extent(rng, 1, 9)
    full = (w - 1) * st + dil * (k - 1) + 1
    p.update(deconv1d_cut(rng, full))
    p.update(activation(rng))
    return Case("Deconvolution1D", p, [tensor(rng, (inc, w))])


def _conv3d(rng, name: str, depthwise: bool):
    inc, outc = (pick(rng, (1, 3, 4, 5)), pick(rng, (1, 3, 4, 8))) if chance(rng, 0.5) else (channels(rng),
                                                                                            channels(rng))
    group = 1
    if depthwise:
        outc = inc
        group = pick(rng, [g for g in range(1, inc + 1) if inc % g == 0])
    k, st = extent(rng, 1, 3), pick(rng, (1, 2))
    p = {0: outc, 1: k, 3: st, 5: int(chance(rng, 0.7)), 6: outc * (inc // group) * k ** 3}
    if depthwise:
        p[7] = group
    if chance(rng, 0.3):
        p.update({11: extent(rng, 1, 3), 21: extent(rng, 1, 3), 13: pick(rng, (1, 2)), 23: pick(rng, (1, 2))})
        p[6] = outc * (inc // group) * k * p[11] * p[21]
    if chance(rng, 0.5):
        p[4] = pick(rng, (1, -233, -234))
    p.update(activation(rng))
    if chance(rng, 0.3):  # dilation, per axis
        p.update({2: pick(rng, (1, 2)), 12: pick(rng, (1, 2)), 22: pick(rng, (1, 2))})
    if p.get(4, 0) == 1 and chance(rng, 0.4):  # per-side pads: right, top, bottom, front, behind
        p.update({k: int(rng.integers(0, 3)) for k in (15, 14, 16, 24, 17)})
    # the input covers the dilated kernel on every axis (w, h, d as params 1/2, 11/12, 21/22)
    span = [p.get(kid, k) and (p.get(kid, k) - 1) * p.get(did, 1) + 1 for kid, did in ((21, 22), (11, 12), (1, 2))]
    return Case(name, p, [tensor(rng, (inc, *[extent(rng, n, n + 4) for n in span]))])


def convolution3d(rng):
    return _conv3d(rng, "Convolution3D", False)


def convolutiondepthwise3d(rng):
    return _conv3d(rng, "ConvolutionDepthWise3D", True)


def _deconv3d(rng, name: str, depthwise: bool):
    inc, outc = pick(rng, (1, 3, 4, 5)), pick(rng, (1, 3, 4, 8))
    group = 1
    if depthwise:
        outc = inc
        group = pick(rng, [g for g in range(1, inc + 1) if inc % g == 0])
    k, st = extent(rng, 1, 3), pick(rng, (1, 2))
    p = {0: outc, 1: k, 3: st, 5: int(chance(rng, 0.7)), 6: outc * (inc // group) * k ** 3}
    if depthwise:
        p[7] = group
    sizes = [extent(rng, 1, 4) for _ in range(3)]
    kind = int(rng.integers(0, 3))
    if kind == 1:
        p[18] = 1 if st > 1 else 0
    elif kind == 2:  # explicit output size, SAME-style cut
        full = [(n - 1) * st + k for n in sizes]  # d, h, w
        p[4] = pick(rng, (-233, -234))
        p[25] = int(rng.integers(max(1, full[2] - 2), full[2] + 1))  # output_w, _h, _d
        p[26] = int(rng.integers(max(1, full[1] - 2), full[1] + 1))
        p[27] = int(rng.integers(max(1, full[0] - 2), full[0] + 1))
    p.update(activation(rng))
    return Case(name, p, [tensor(rng, (inc, *sizes))])


def deconvolution3d(rng):
    return _deconv3d(rng, "Deconvolution3D", False)


def deconvolutiondepthwise3d(rng):
    return _deconv3d(rng, "DeconvolutionDepthWise3D", True)


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


def unfold(rng):
    c = channels(rng)
    k, st, dil = extent(rng, 1, 3), pick(rng, (1, 2)), pick(rng, (1, 2))
    p = {1: k, 2: dil, 3: st}
    if chance(rng, 0.5):
        p[4] = pick(rng, (1, 2, -233, -234))
        if chance(rng, 0.5) and p[4] > 0:
            p[18] = floats(rng, 1, -1, 1)[0]
    e = dil * (k - 1) + 1
    return Case("Unfold", p, [tensor(rng, (c, extent(rng, e, e + 6), extent(rng, e, e + 6)))])


def fold(rng):
    outc = channels(rng)
    k, st = extent(rng, 1, 3), pick(rng, (1, 2))
    ow, oh = extent(rng, k, k + 6), extent(rng, k, k + 6)
    p = {0: outc, 1: k, 3: st, 20: ow, 21: oh}
    if chance(rng, 0.4):
        p[4] = 1
    pad = p.get(4, 0)
    blocks = ((oh + 2 * pad - k) // st + 1) * ((ow + 2 * pad - k) // st + 1)
    return Case("Fold", p, [tensor(rng, (outc * k * k, blocks))])


def cumulativesum(rng):
    d = _dims(rng)
    return Case("CumulativeSum", {0: int(rng.integers(-d, d))}, [tensor(rng, shape(rng, d, 1, 8))])


def diag(rng):
    d = _dims(rng, 1, 2)
    shp = shape(rng, d, 1, 8)
    return Case("Diag", {0: int(rng.integers(-3, 4))}, [tensor(rng, shp)])


def flip(rng):
    d = _dims(rng)
    axes = sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
    return Case("Flip", {0: [a - d if chance(rng, 0.3) else a for a in axes]}, [tensor(rng, shape(rng, d, 1, 7))])


def glu(rng):
    d = _dims(rng, 1, 3)
    shp = list(shape(rng, d, 1, 6))
    axis = int(rng.integers(0, d))
    shp[axis] *= 2
    return Case("GLU", {0: axis - d if chance(rng, 0.3) else axis}, [tensor(rng, tuple(shp))])


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


def copyto(rng):
    d = _dims(rng)
    dst = shape(rng, d, 2, 8)
    src = tuple(extent(rng, 1, n) for n in dst)
    offs = [int(rng.integers(0, n - s + 1)) for n, s in zip(dst, src)]
    if chance(rng, 0.5):
        p = {9: offs, 11: list(range(d))}
    else:
        ids = {1: (0,), 2: (1, 0), 3: (2, 1, 0), 4: (2, 13, 1, 0)}[d]
        p = {k: o for k, o in zip(ids, offs) if o}
    return Case("CopyTo", p, [tensor(rng, dst), tensor(rng, src)])


def embed(rng):
    n_out, vocab = channels(rng), extent(rng, 2, 20)
    p = {0: n_out, 1: vocab, 2: int(chance(rng, 0.5)), 3: n_out * vocab}
    ids = rng.integers(0, vocab, size=shape(rng, 1, 1, 7)).astype(np.int32)
    return Case("Embed", p, [ids])


def statisticspooling(rng):
    return Case("StatisticsPooling", {0: int(rng.integers(0, 2))},
                [tensor(rng, (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7)))])


def dropout(rng):
    return Case("Dropout", {0: floats(rng, 1, 0.1, 2.0)[0]} if chance(rng, 0.5) else {},
                [tensor(rng, shape(rng, _dims(rng), 1, 8))])


def bias(rng):
    shp = (channels(rng), extent(rng, 1, 7), extent(rng, 1, 7))
    return Case("Bias", {0: shp[0]}, [tensor(rng, shp)])


def _recurrent(name):
    def gen(rng):
        inp, hidden, seq = channels(rng), channels(rng), extent(rng, 1, 9)
        direction = int(rng.integers(0, 3))
        nd = 2 if direction == 2 else 1
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[name]
        p = {0: hidden, 1: gates * hidden * inp * nd, 2: direction}
        if name == "LSTM" and chance(rng, 0.3):
            proj = extent(rng, 1, hidden)
            p[0], p[3] = proj, hidden
        return Case(name, p, [tensor(rng, (seq, inp))], tol=2e-4, tol16=2e-2)
    return gen


RECURRENT = {name: _recurrent(name) for name in ("RNN", "GRU", "LSTM")}
