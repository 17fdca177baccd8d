"""Fuzz cases for DeformableConv2D, Einsum, Spectrogram / InverseSpectrogram,
DeconvolutionDepthWise1D, Split, MemoryData and Crop's expression form (params 19-21:
starts / ends / axes as prefix expressions over the input shapes)."""

from __future__ import annotations

from vkncnn.tools.layer_fuzz import Case
from vkncnn.tools.layer_fuzz_draw import activation, chance, channels, deconv1d_cut, extent, pick, shape, tensor


def _dims(rng, lo: int = 1, hi: int = 4) -> int:
    return int(rng.integers(lo, hi + 1))


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


def _stft(rng):
    n_fft = pick(rng, (4, 8, 9, 16, 20))
    p = {0: n_fft, 2: extent(rng, 1, n_fft), 3: extent(rng, max(1, n_fft // 2), n_fft),
         4: int(rng.integers(0, 3)), 7: int(rng.integers(0, 3))}
    return n_fft, p


def spectrogram(rng):
    n_fft, p = _stft(rng)
    p.update({1: int(rng.integers(0, 3)), 5: int(rng.integers(0, 2)), 6: int(rng.integers(0, 3)),
              8: int(rng.integers(0, 2))})
    n = extent(rng, n_fft if not p[5] else max(n_fft // 2 + 1, 2), 80)
    return Case("Spectrogram", p, [tensor(rng, (n,))], tol=5e-4, tol16=2e-2)


def inversespectrogram(rng):
    n_fft, p = _stft(rng)
    onesided = chance(rng, 0.5)
    p.update({1: int(rng.integers(0, 3)), 5: int(rng.integers(0, 2))})
    if p[4] == 0 and p[3] < n_fft and p[5]:
        p[3] = n_fft  # a zero-padded window with center: ncnn divides by its zero overlap
    freqs = n_fft // 2 + 1 if onesided else n_fft
    frames = extent(rng, 2, 9)
    return Case("InverseSpectrogram", p, [tensor(rng, (freqs, frames, 2))], tol=1e-3, tol16=3e-2)


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


def split(rng):
    return Case("Split", {}, [tensor(rng, shape(rng, _dims(rng), 1, 9))], n_outputs=extent(rng, 1, 4))


def memorydata(rng):
    d = _dims(rng)
    shp = shape(rng, d, 1, 8)
    names = {1: (0,), 2: (1, 0), 3: (2, 1, 0), 4: (2, 11, 1, 0)}[d]  # numpy axis order: c, d, h, w
    p = dict(zip(names, shp))
    tagged = chance(rng, 0.4)
    if tagged:
        p[21] = 0
    data = tensor(rng, shp)
    return Case("MemoryData", p, [], weights=[(data, tagged)])


def _q(s: str) -> str:
    return f'"{s}"'


def crop_expr(rng):
    """Crop with starts/ends/axes as expressions over the input shapes (ncnn's *_expr)."""
    d = _dims(rng)
    shp = shape(rng, d, 2, 12)
    letters = {1: "w", 2: "hw", 3: "chw", 4: "cdhw"}[d]
    axes = sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
    starts, ends = [], []
    for a in axes:
        ref = f"0{letters[a]}"
        starts.append(pick(rng, ("1", f"//({ref},3)", f"floor(*({ref},0.25))", f"-(0,{ref})", "0", "-233")))
        ends.append(pick(rng, ("-1", f"{ref}", f"ceil(*({ref},0.8))", f"-({ref},1)", "0", "-233",
                               f"max(//({ref},2),1)")))
    if starts.count("-233") and chance(rng, 0.5):
        starts = ["0" if s == "-233" else s for s in starts]
    p = {19: _q(",".join(starts)), 20: _q(",".join(ends)),
         21: _q(",".join(str(a - d if chance(rng, 0.3) else a) for a in axes))}
    return Case("Crop", p, [tensor(rng, shp)])


GENERATORS = {
    "DeformableConv2D": deformableconv2d,
    "Einsum": einsum,
    "Spectrogram": spectrogram,
    "InverseSpectrogram": inversespectrogram,
    "DeconvolutionDepthWise1D": deconvolutiondepthwise1d,
    "Split": split,
    "MemoryData": memorydata,
    "Crop@expr": crop_expr,
}
