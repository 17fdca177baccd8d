"""Fuzz cases for the convolutions: Convolution, ConvolutionDepthWise, Deconvolution,
DeconvolutionDepthWise in 1-D, 2-D and 3-D, and DeformableConv2D.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import activation, chance, channels, deconv1d_cut, extent, floats, pick, tensor


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


def deconvolutiondepthwise1d(rng):
    inc = channels(rng)
    g = pick(rng, [d for d in range(1, inc + 1) if inc % d == 0])
    outc = g * pick(rng, (1, 2, 3))
    k, dil, st = extent(rng, 1, 4), pick(rng, (1, 2)), pick(rng, (1, 2, 3))
    p = {0: outc, 1: k, 2: dil, 3: st, 5: int(chance(rng, 0.7)), 6: outc * (inc // g) * k, 7: g}
    w = extent(rng, 1, 9)
    full = (w - 1) * st + dil * (k - 1) + 1
    p.update(deconv1d_cut(rng, full))
    p.update(activation(rng))
    return Case("DeconvolutionDepthWise1D", p, [tensor(rng, (inc, w))])


def deformableconv2d(rng):
    inc, outc = pick(rng, (1, 3, 4, 5, 8)), pick(rng, (1, 3, 4, 8))
    kw, kh = extent(rng, 1, 3), extent(rng, 1, 3)
    p = {0: outc, 1: kw, 11: kh, 5: int(chance(rng, 0.7)), 6: outc * inc * kw * kh}
    if chance(rng, 0.4):
        p.update({2: pick(rng, (1, 2)), 12: pick(rng, (1, 2))})
    if chance(rng, 0.4):
        p.update({3: pick(rng, (1, 2)), 13: pick(rng, (1, 2))})
    if chance(rng, 0.5):
        p[4] = int(rng.integers(0, 2))
    p.update(activation(rng))
    dw, dh, sw, sh, pad = p.get(2, 1), p.get(12, 1), p.get(3, 1), p.get(13, 1), p.get(4, 0)
    h, w = extent(rng, dh * (kh - 1) + 1, 9), extent(rng, dw * (kw - 1) + 1, 9)
    oh = (h + 2 * pad - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pad - dw * (kw - 1) - 1) // sw + 1
    taps = kh * kw
    ins = [tensor(rng, (inc, h, w)), tensor(rng, (2 * taps, oh, ow), -2.5, 2.5)]
    if chance(rng, 0.6):
        ins.append(tensor(rng, (taps, oh, ow), 0.0, 1.0))  # DCNv2 modulation mask
    return Case("DeformableConv2D", p, ins, tol=2e-4)
