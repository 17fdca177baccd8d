"""Fuzz cases for the weighted layers: convolutions, deconvolutions, pooling, InnerProduct,
Gemm, MatMul. Each generator returns a valid config over ncnn's parameter space, or None
when the draw cannot produce one (the caller skips it)."""

from __future__ import annotations

import numpy as np

from vkncnn.tools.layer_fuzz import Case
from vkncnn.tools.layer_fuzz_draw import activation, chance, channels, extent, floats, pick, shape, tensor


def _pads(rng, allow_same: bool = True) -> dict:
    """Symmetric, per-side, or SAME_UPPER (-233) / SAME_LOWER (-234) padding."""
    kind = int(rng.integers(0, 4 if allow_same else 3))
    if kind == 0:
        return {}
    if kind == 1:
        return {4: int(rng.integers(0, 3))}
    if kind == 2:
        return {4: int(rng.integers(0, 3)), 15: int(rng.integers(0, 3)),
                14: int(rng.integers(0, 3)), 16: int(rng.integers(0, 3))}
    return {4: pick(rng, (-233, -234))}


def _window(rng) -> dict:
    """Kernel, dilation, stride; square or rectangular."""
    p = {1: extent(rng, 1, 5), 2: pick(rng, (1, 1, 2, 3)), 3: pick(rng, (1, 1, 2, 3))}
    if chance(rng, 0.4):
        p.update({11: extent(rng, 1, 5), 12: pick(rng, (1, 2)), 13: pick(rng, (1, 2, 3))})
    return p


def _kernel_hw(p: dict):
    kw, dw, sw = p[1], p[2], p[3]
    return kw, p.get(11, kw), dw, p.get(12, dw), sw, p.get(13, sw)


def _fits(p: dict, h: int, w: int) -> bool:
    kw, kh, dw, dh, _, _ = _kernel_hw(p)
    pl = p.get(4, 0)
    if pl < 0:
        return True
    pr, pt = p.get(15, pl), p.get(14, pl)
    pb = p.get(16, pt)
    return w + pl + pr >= dw * (kw - 1) + 1 and h + pt + pb >= dh * (kh - 1) + 1


def _channels_and_group(rng, depthwise: bool) -> tuple[int, int, int]:
    """(inc, outc, group): one group, or for the depthwise layers mostly one channel per
    group, else any group count dividing both sides."""
    inc, outc = channels(rng), channels(rng)
    if not depthwise:
        return inc, outc, 1
    if chance(rng, 0.6):
        return inc, inc, inc
    return inc, outc, pick(rng, [g for g in range(1, 25) if inc % g == 0 and outc % g == 0])


def _conv(rng, depthwise: bool):
    inc, outc, group = _channels_and_group(rng, depthwise)
    p = {0: outc, 5: int(chance(rng, 0.7))}
    p.update(_window(rng))
    p.update(_pads(rng))
    if p.get(4, 0) != 0 and chance(rng, 0.4):
        p[18] = floats(rng, 1, -1.0, 1.0)[0]
    p.update(activation(rng))
    kw, kh, *_ = _kernel_hw(p)
    p[6] = outc * (inc // group) * kw * kh
    if depthwise:
        p[7] = group
    h, w = extent(rng), extent(rng)
    if not _fits(p, h, w):
        h, w = h + 10, w + 10
        if not _fits(p, h, w):
            return None
    if chance(rng, 0.1) and 18 not in p:
        p[8] = 1  # int8 weights and activations (ncnn quantizes the fp32 weights at load)
        return Case("ConvolutionDepthWise" if depthwise else "Convolution", p, [tensor(rng, (inc, h, w))],
                    tol=2e-2, tol16=3e-2)
    if not depthwise and chance(rng, 0.05) and kw == kh == 1:
        return Case("Convolution", {k: v for k, v in p.items() if k not in (4, 14, 15, 16, 18)},
                    [tensor(rng, (inc,))])
    if chance(rng, 0.08):  # dynamic weight: weight (and bias) come as blobs
        p[19] = 1
        p.pop(6)
        ins = [tensor(rng, (inc, h, w)), tensor(rng, (outc, inc // group, kh, kw), -0.5, 0.5)]
        if p[5]:
            ins.append(tensor(rng, (outc,), -0.1, 0.1))
        return Case("ConvolutionDepthWise" if depthwise else "Convolution", p, ins)
    return Case("ConvolutionDepthWise" if depthwise else "Convolution", p, [tensor(rng, (inc, h, w))])


def convolution(rng):
    return _conv(rng, False)


def convolution_depthwise(rng):
    return _conv(rng, True)


def _deconv(rng, depthwise: bool):
    inc, outc, group = _channels_and_group(rng, depthwise)
    p = {0: outc, 5: int(chance(rng, 0.7))}
    p.update(_window(rng))
    kind = int(rng.integers(0, 4))
    if kind == 1:
        p.update(_pads(rng, allow_same=False))
    elif kind == 2:
        p[18] = int(rng.integers(0, 3))
        if chance(rng, 0.5):
            p[19] = int(rng.integers(0, 3))
    h, w = extent(rng, 1, 9), extent(rng, 1, 9)
    kw, kh, dw, dh, sw, sh = _kernel_hw(p)
    full_w, full_h = (w - 1) * sw + dw * (kw - 1) + 1, (h - 1) * sh + dh * (kh - 1) + 1
    if kind == 3:  # explicit output size with SAME-style cut
        p[4] = pick(rng, (-233, -234))
        p[20] = int(rng.integers(max(1, full_w - 3), full_w + 1))
        p[21] = int(rng.integers(max(1, full_h - 3), full_h + 1))
    if p.get(4, 0) > 0 or p.get(15, 0) > 0:
        pl = p.get(4, 0)
        pr, pt = p.get(15, pl), p.get(14, pl)
        pb = p.get(16, pt)
        if full_w + p.get(18, 0) - pl - pr < 1 or full_h + p.get(19, p.get(18, 0)) - pt - pb < 1:
            return None
    p.update(activation(rng))
    p[6] = outc * (inc // group) * kw * kh
    name = "Deconvolution"
    if depthwise:
        p[7] = group
        name = "DeconvolutionDepthWise"
    if chance(rng, 0.08):  # dynamic weight: (inc, outc/group, kh, kw) as a blob
        p[28] = 1
        p.pop(6)
        ins = [tensor(rng, (inc, h, w)), tensor(rng, (inc, outc // group, kh, kw), -0.5, 0.5)]
        if p[5]:
            ins.append(tensor(rng, (outc,), -0.1, 0.1))
        return Case(name, p, ins)
    return Case(name, p, [tensor(rng, (inc, h, w))])


def deconvolution(rng):
    return _deconv(rng, False)


def deconvolution_depthwise(rng):
    return _deconv(rng, True)


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
