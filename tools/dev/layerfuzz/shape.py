"""Fuzz cases for the layers that move data without arithmetic: Concat, Slice, Split, Crop
(with its expression form, params 19-21: starts / ends / axes as prefix expressions over
the input shapes), Padding, Reshape, Permute, Squeeze, ExpandDims, Flatten, Tile, Flip,
Diag, CopyTo, ShuffleChannel, PixelShuffle, Reorg, Unfold / Fold, MemoryData. Axes are
numpy-style over (c, [d], h, w), as ncnn numbers them.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import chance, channels, dims, extent, floats, pick, shape, tensor


def concat(rng):
    d = dims(rng)
    base = list(shape(rng, d))
    axis = int(rng.integers(0, d))
    n = int(rng.integers(1, 5))
    ins = []
    for _ in range(n):
        s = list(base)
        s[axis] = channels(rng) if axis == 0 else extent(rng, 1, 7)
        ins.append(tensor(rng, tuple(s)))
    p = {0: axis - d if chance(rng, 0.3) else axis}
    return Case("Concat", p, ins)


def slice_(rng):
    d = dims(rng)
    shp = shape(rng, d, 2, 9)
    axis = int(rng.integers(0, d))
    n = shp[axis]
    k = int(rng.integers(1, min(n, 4) + 1))
    if chance(rng, 0.3):  # indices: k-1 cut points, increasing
        cuts = sorted(rng.choice(np.arange(1, n), size=k - 1, replace=False).tolist()) if k > 1 else []
        if not cuts:
            return None
        p = {2: [c - n if chance(rng, 0.3) else c for c in cuts]}
    else:
        sizes = np.diff(np.sort(np.concatenate([[0, n], rng.choice(np.arange(1, n), size=k - 1, replace=False)])))
        sl = [int(s) for s in sizes]
        if chance(rng, 0.4):
            sl[-1] = -233
        if chance(rng, 0.2) and n % k == 0:
            sl = [-233] * k
        p = {0: sl}
    p[1] = axis - d if chance(rng, 0.3) else axis
    return Case("Slice", p, [tensor(rng, shp)], n_outputs=k)


def crop(rng):
    d = dims(rng)
    shp = shape(rng, d, 2, 9)
    form = int(rng.integers(0, 3))
    letters = "w" if d == 1 else "hw" if d == 2 else "chw" if d == 3 else "cdhw"
    ext = dict(zip(letters, shp))
    if form == 0:  # offsets + sizes (-233 = the rest), maybe tail offsets
        ids = {"w": (0, 3, 6), "h": (1, 4, 7), "d": (13, 14, 15), "c": (2, 5, 8)}
        p = {}
        for letter, n in ext.items():
            off = int(rng.integers(0, n))
            oid, sid, tid = ids[letter]
            if off:
                p[oid] = off
            kind = int(rng.integers(0, 3))
            if kind == 0:
                p[sid] = int(rng.integers(1, n - off + 1))
            elif kind == 1:
                p[sid] = -233
            else:
                tail = int(rng.integers(0, n - off))
                if tail:
                    p[tid] = tail
        if not any(k in p for k in (3, 4, 14, 5, 6, 7, 15, 8)):
            p[ids[letters[-1]][1]] = -233  # a size param: else ncnn reads the 2-input form
        return Case("Crop", p, [tensor(rng, shp)])
    if form == 1:  # starts / ends / axes
        axes = sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
        starts, ends = [], []
        for a in axes:
            n = shp[a]
            s = int(rng.integers(0, n))
            e = int(rng.integers(s + 1, n + 1))
            starts.append(s - n if chance(rng, 0.3) else s)
            ends.append(pick(rng, (e, e - n if e < n else -233, 100000)) if chance(rng, 0.5) else e)
        p = {9: starts, 10: ends}
        if chance(rng, 0.8) or len(axes) != d:
            p[11] = [a - d if chance(rng, 0.3) else a for a in axes]
        return Case("Crop", p, [tensor(rng, shp)])
    # reference blob: crop to its extents from the offset params
    rd = int(rng.integers(max(1, d - 1), d + 1))
    ref = tuple(extent(rng, 1, n) for n in shp[d - rd:])
    p = {}
    for letter, oid in zip("whdc", (0, 1, 13, 2)):
        if letter in ext and chance(rng, 0.5):
            rlen = dict(zip(letters[d - rd:], ref)).get(letter, ext[letter])
            room = ext[letter] - rlen
            if room > 0:
                p[oid] = int(rng.integers(0, room + 1))
    return Case("Crop", p, [tensor(rng, shp), tensor(rng, ref)])


def padding(rng):
    d = dims(rng)
    shp = shape(rng, d, 2, 8)
    mode = int(rng.integers(0, 3))
    p = {4: mode}
    limit = 3 if mode != 2 else None
    ext = list(shp)

    def amount(n):
        hi = (n - 1) if mode == 2 else limit
        return int(rng.integers(0, hi + 1)) if hi else 0

    if d >= 2:
        p[0], p[1] = amount(ext[-2]), amount(ext[-2])
    p[2], p[3] = amount(ext[-1]), amount(ext[-1])
    if d >= 3 and chance(rng, 0.4):
        p[7], p[8] = amount(ext[-3]), amount(ext[-3])
    weights = []
    if mode == 0:
        p[5] = floats(rng, 1, -2.0, 2.0)[0]
        if d == 3 and chance(rng, 0.3):
            outc = shp[0] + p.get(7, 0) + p.get(8, 0)
            p[6] = outc
            weights = [np.asarray(floats(rng, outc, -2, 2), np.float32)]
    return Case("Padding", p, [tensor(rng, shp)], weights=weights)


def reshape(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 6)
    total = int(np.prod(shp))
    nd = dims(rng)
    # split total into nd factors
    factors = []
    rest = total
    for _ in range(nd - 1):
        divs = [k for k in range(1, rest + 1) if rest % k == 0]
        f = pick(rng, divs)
        factors.append(f)
        rest //= f
    factors.append(rest)
    out = factors[::-1]  # innermost-first order w, h, d, c below
    names = {1: (0,), 2: (0, 1), 3: (0, 1, 2), 4: (0, 1, 11, 2)}[nd]
    p = dict(zip(names, out))
    if chance(rng, 0.5):
        p[pick(rng, names)] = -1
    # 0 copies the input's extent of the same name (w, h, d, c; 1 where the input has none)
    named = dict(zip({1: "w", 2: "hw", 3: "chw", 4: "cdhw"}[d], shp))
    in_ext = {0: named.get("w", 1), 1: named.get("h", 1), 11: named.get("d", 1), 2: named.get("c", 1)}
    for key in names:
        if p[key] == in_ext[key] and chance(rng, 0.4):
            p[key] = 0
    if list(p.values()).count(-1) > 1:
        return None
    return Case("Reshape", p, [tensor(rng, shp)])


def permute(rng):
    d = dims(rng, 2, 4)
    shp = shape(rng, d, 1, 7)
    order = int(rng.integers(0, {2: 2, 3: 6, 4: 24}[d]))
    return Case("Permute", {0: order}, [tensor(rng, shp)])


def squeeze(rng):
    d = dims(rng)
    shp = tuple(1 if chance(rng, 0.5) else n for n in shape(rng, d, 1, 5))
    if chance(rng, 0.5):
        p = {k: int(chance(rng, 0.6)) for k in {1: (0,), 2: (0, 1), 3: (0, 1, 2), 4: (0, 1, 11, 2)}[d]}
    else:
        ones = [i for i, n in enumerate(shp) if n == 1]
        if not ones:
            return None
        axes = sorted(rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)), replace=False).tolist())
        p = {3: [a - d if chance(rng, 0.3) else a for a in axes]}
    return Case("Squeeze", p, [tensor(rng, shp)])


def expanddims(rng):
    d = dims(rng, 1, 3)
    shp = shape(rng, d, 1, 6)
    room = 4 - d
    k = int(rng.integers(1, room + 1))
    axes = sorted(rng.choice(d + k, size=k, replace=False).tolist())
    p = {3: axes}
    return Case("ExpandDims", p, [tensor(rng, shp)])


def flatten(rng):
    return Case("Flatten", {}, [tensor(rng, shape(rng, dims(rng), 1, 6))])


def tile(rng):
    d = dims(rng)
    shp = shape(rng, d, 1, 5)
    if chance(rng, 0.5):
        p = {0: int(rng.integers(0, d)), 1: int(rng.integers(1, 4))}
    else:
        n = int(rng.integers(1, 5))
        p = {2: [int(rng.integers(1, 4)) for _ in range(n)]}
    return Case("Tile", p, [tensor(rng, shp)])


def shufflechannel(rng):
    g = pick(rng, (1, 2, 3, 4))
    c = g * pick(rng, (1, 2, 3, 4, 5, 6))
    return Case("ShuffleChannel", {0: g, 1: int(rng.integers(0, 2))},
                [tensor(rng, (c, extent(rng, 1, 7), extent(rng, 1, 7)))])


def pixelshuffle(rng):
    r = pick(rng, (1, 2, 3))
    c = r * r * pick(rng, (1, 2, 3, 4, 5))
    return Case("PixelShuffle", {0: r, 1: int(rng.integers(0, 2))},
                [tensor(rng, (c, extent(rng, 1, 6), extent(rng, 1, 6)))])


def reorg(rng):
    s = pick(rng, (1, 2, 3))
    return Case("Reorg", {0: s, 1: int(rng.integers(0, 2))},
                [tensor(rng, (channels(rng), s * extent(rng, 1, 4), s * extent(rng, 1, 4)))])


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


def flip(rng):
    d = dims(rng)
    axes = sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
    return Case("Flip", {0: [a - d if chance(rng, 0.3) else a for a in axes]}, [tensor(rng, shape(rng, d, 1, 7))])


def diag(rng):
    d = dims(rng, 1, 2)
    shp = shape(rng, d, 1, 8)
    return Case("Diag", {0: int(rng.integers(-3, 4))}, [tensor(rng, shp)])


def copyto(rng):
    d = dims(rng)
    dst = shape(rng, d, 2, 8)
    src = tuple(extent(rng, 1, n) for n in dst)
    offs = [int(rng.integers(0, n - s + 1)) for n, s in zip(dst, src)]
    if chance(rng, 0.5):
        p = {9: offs, 11: list(range(d))}
    else:
        ids = {1: (0,), 2: (1, 0), 3: (2, 1, 0), 4: (2, 13, 1, 0)}[d]
        p = {k: o for k, o in zip(ids, offs) if o}
    return Case("CopyTo", p, [tensor(rng, dst), tensor(rng, src)])


def split(rng):
    return Case("Split", {}, [tensor(rng, shape(rng, dims(rng), 1, 9))], n_outputs=extent(rng, 1, 4))


def memorydata(rng):
    d = dims(rng)
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
    d = dims(rng)
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
