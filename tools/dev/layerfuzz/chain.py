"""Fuzz cases of 2-5 layer chains: what one-layer cases cannot reach.

The GPU runtime folds layers into one dispatch (gpu/fusion.py: Eltwise -> ReLU, a
convolution + Eltwise sum with a skip [-> ReLU]), picks each blob's packing from its
producer and readers, runs in-place layers on shared blobs and re-plans when an
intermediate blob is extracted after the output. Each template draws a small model of
the shapes real nets use (stems, residual blocks, inception concats, FPN upsampling,
reshape heads, a Split feeding an in-place layer and another reader), sometimes with
the intermediate blobs extracted too, in a random order.
"""

from __future__ import annotations

from vkncnn.testing import param_entries

from .case import Case
from .draw import activation, chance, extent, floats, pick, tensor

# wider than draw.CHANNELS: 32+ output channels take convolution.comp's
# 8-rows-per-invocation tile on a CPU device, and odd counts leave partial pack4/pack8 items
CHAIN_CHANNELS = (1, 3, 4, 5, 8, 12, 16, 24, 32, 36, 48, 64)


class _Model:
    """A .param under construction: blobs named b0.., layers l0.."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.blobs: list[str] = []
        self.n_inputs = 0

    def input(self) -> str:
        name = f"in{self.n_inputs}"
        self.n_inputs += 1
        self.lines.append(f"Input {name} 0 1 {name}")
        self.blobs.append(name)
        return name

    def add(self, type_name: str, bottoms: list, params: dict, n_tops: int = 1) -> list:
        tops = [f"b{len(self.blobs) + i}" for i in range(n_tops)]
        self.blobs += tops
        line = f"{type_name} l{len(self.lines)} {len(bottoms)} {n_tops} {' '.join(bottoms)} {' '.join(tops)}"
        self.lines.append(f"{line} {param_entries(params)}".rstrip())
        return tops

    def one(self, type_name: str, bottoms: list, params: dict) -> str:
        return self.add(type_name, bottoms, params)[0]

    def text(self) -> str:
        return f"7767517\n{len(self.lines)} {len(self.blobs)}\n" + "\n".join(self.lines) + "\n"


def _chans(rng) -> int:
    return pick(rng, CHAIN_CHANNELS)


def _conv(m: _Model, rng, x: str, inc: int, outc: int, k: int = 0, stride: int = 1, act: bool = True,
          depthwise: bool = False) -> str:
    """A shape-keeping (stride 1) or halving convolution with 'same' padding k // 2."""
    k = k or pick(rng, (1, 3, 3, 5))
    p = {0: outc, 1: k, 3: stride, 4: k // 2, 5: int(chance(rng, 0.8))}
    if act:
        p.update(activation(rng))
    if depthwise:
        p[7] = inc
        p[6] = outc * k * k
        return m.one("ConvolutionDepthWise", [x], p)
    p[6] = outc * inc * k * k
    return m.one("Convolution", [x], p)


def _out_hw(h: int, w: int, stride: int) -> tuple:
    return (h - 1) // stride + 1, (w - 1) // stride + 1


_ACT_LAYERS = (
    ("ReLU", lambda r: {}), ("ReLU", lambda r: {0: floats(r, 1, 0.01, 0.3)[0]}),
    ("Clip", lambda r: {0: 0.0, 1: 6.0}), ("Clip", lambda r: {0: floats(r, 1, -1.0, 0.0)[0], 1: 0.5}),
    ("Sigmoid", lambda r: {}), ("Swish", lambda r: {}), ("HardSwish", lambda r: {0: 1 / 6.0, 1: 0.5}),
    ("HardSigmoid", lambda r: {0: 0.2, 1: 0.5}), ("Mish", lambda r: {}), ("TanH", lambda r: {}),
    ("ELU", lambda r: {0: 1.0}), ("GELU", lambda r: {0: int(r.integers(0, 2))}),
    ("BinaryOp", lambda r: {0: pick(r, (0, 2)), 1: 1, 2: floats(r, 1, 0.5, 1.5)[0]}),
)


def _act_layer(m: _Model, rng, x: str) -> str:
    name, params = pick(rng, _ACT_LAYERS)
    return m.one(name, [x], params(rng))


def _finish(rng, m: _Model, ins: list, outputs: list, name: str, convs: int) -> Case:
    """The case: the last output always, each earlier listed blob at 40%, in a random order."""
    want = [outputs[-1]] + [b for b in outputs[:-1] if chance(rng, 0.4)]
    order = [want[i] for i in rng.permutation(len(want))]
    tol16 = 1e-2 if convs <= 1 else 2e-2  # each fp16-stored intermediate rounds once more
    return Case(name, {}, ins, text=m.text(), outputs=tuple(order), tol=2e-4, tol16=tol16)


def conv_act(rng):
    """conv [-> activation layer] [-> conv]: the activation folded into the producer."""
    m, c = _Model(), _chans(rng)
    h, w = extent(rng, 1, 12), extent(rng, 1, 12)
    x = m.input()
    outc = _chans(rng)
    dw = chance(rng, 0.25)
    if dw:
        outc = c
    stride = pick(rng, (1, 1, 2))
    y = _conv(m, rng, x, c, outc, stride=stride, act=chance(rng, 0.3), depthwise=dw)
    z = _act_layer(m, rng, y)
    outs = [y, z]
    convs = 1
    if chance(rng, 0.5):
        outs.append(_conv(m, rng, z, outc, _chans(rng)))
        convs += 1
    return _finish(rng, m, [tensor(rng, (c, h, w))], outs, "Chain@conv_act", convs)


def residual(rng):
    """x -> Split -> conv [-> act -> conv] ; (projection conv or) skip ; Eltwise sum /
    BinaryOp add [-> ReLU] [-> conv]: the residual folded into the last convolution."""
    m, c = _Model(), _chans(rng)
    h, w = extent(rng, 1, 12), extent(rng, 1, 12)
    x = m.input()
    if chance(rng, 0.3):  # a stem conv first, so the split blob is a GPU product
        c2 = _chans(rng)
        x = _conv(m, rng, x, c, c2)
        c_in, c = c, c2
    else:
        c_in = c
    a, b = m.add("Split", [x], {}, 2)
    outc = c if chance(rng, 0.7) else _chans(rng)
    y = _conv(m, rng, a, c, outc, act=chance(rng, 0.3))
    convs = 1
    if chance(rng, 0.5):
        y = _act_layer(m, rng, y) if chance(rng, 0.3) else y
        y = _conv(m, rng, y, outc, outc, act=chance(rng, 0.2))
        convs += 1
    skip = b
    if outc != c or chance(rng, 0.3):  # projection shortcut: both summands convolutions
        skip = _conv(m, rng, b, c, outc, k=1, act=False)
        convs += 1
    pair = [y, skip] if chance(rng, 0.7) else [skip, y]
    kind = int(rng.integers(0, 4))
    if kind == 0:
        s = m.one("BinaryOp", pair, {0: 0})
    elif kind == 1:
        s = m.one("Eltwise", pair, {0: 1, 1: pick(rng, ([1.0, 1.0], [0.5, 2.0], [1.0, -1.0]))})
    elif kind == 2:
        s = m.one("Eltwise", pair, {0: pick(rng, (0, 2))})
    else:
        s = m.one("Eltwise", pair, {0: 1})
    outs = [y, skip, s]
    if chance(rng, 0.7):
        outs.append(m.one("ReLU", [s], {0: floats(rng, 1, 0.05, 0.2)[0]} if chance(rng, 0.2) else {}))
    if chance(rng, 0.3):
        outs.append(_conv(m, rng, outs[-1], outc, _chans(rng)))
        convs += 1
    return _finish(rng, m, [tensor(rng, (c_in, h, w))], outs, "Chain@residual", convs)


def concat(rng):
    """x -> Split -> 2-4 branches of different channel counts (conv, conv-conv, pooling) ->
    Concat on channels [-> 1x1 conv]: the concat's packing differs from its inputs'."""
    m, c = _Model(), _chans(rng)
    h, w = extent(rng, 1, 12), extent(rng, 1, 12)
    x = m.input()
    n = int(rng.integers(2, 5))
    parts = m.add("Split", [x], {}, n)
    outs, chans, convs = [], [], 0
    for p in parts:
        kind = int(rng.integers(0, 4))
        if kind == 3:  # a pooling branch keeps c channels
            outs.append(m.one("Pooling", [p], {0: int(rng.integers(0, 2)), 1: 3, 2: 1, 3: 1}))
            chans.append(c)
            continue
        oc = _chans(rng)
        y = _conv(m, rng, p, c, oc)
        convs += 1
        if kind == 2:
            oc2 = _chans(rng)
            y = _conv(m, rng, y, oc, oc2)
            oc = oc2
            convs += 1
        outs.append(y)
        chans.append(oc)
    cat = m.one("Concat", outs, {0: 0} if chance(rng, 0.7) else {0: -3})
    outs.append(cat)
    if chance(rng, 0.5):
        outs.append(_conv(m, rng, cat, sum(chans), _chans(rng), k=1))
        convs += 1
    return _finish(rng, m, [tensor(rng, (c, h, w))], outs, "Chain@concat", convs)


def reshape(rng):
    """conv -> Reshape / Permute / Flatten / ShuffleChannel -> conv or InnerProduct: a packed
    producer and a reader that sees the data in another layout."""
    m, c = _Model(), _chans(rng)
    h, w = extent(rng, 1, 8), extent(rng, 1, 8)
    x = m.input()
    oc = pick(rng, (4, 8, 12, 16, 24, 32, 48))
    y = _conv(m, rng, x, c, oc)
    kind = int(rng.integers(0, 5))
    if kind == 0:  # (oc, h, w) -> (oc/2, 2h, w) -> conv
        z = m.one("Reshape", [y], {0: w, 1: 2 * h, 2: oc // 2})
        out = _conv(m, rng, z, oc // 2, _chans(rng))
    elif kind == 1:  # Permute (c, h, w) -> (h, c, w) or (w, h, c) -> conv
        order = pick(rng, (1, 2, 3, 4, 5))
        z = m.one("Permute", [y], {0: order})
        new_c = {1: oc, 2: h, 3: h, 4: w, 5: w}[order]
        out = _conv(m, rng, z, new_c, _chans(rng), k=1)
    elif kind == 2:  # Flatten -> InnerProduct (a classifier head)
        z = m.one("Flatten", [y], {})
        n_out = _chans(rng)
        out = m.one("InnerProduct", [z], {0: n_out, 1: 1, 2: n_out * oc * h * w, **activation(rng)})
    elif kind == 3:  # Reshape to (seq, dim) rows -> InnerProduct per row -> Softmax
        z = m.one("Reshape", [y], {0: h * w, 1: oc})
        z = m.one("Permute", [z], {0: 1})
        n_out = _chans(rng)
        z = m.one("Gemm", [z], {4: 0, 5: 1, 7: 0, 8: n_out, 9: oc, 3: 1, 6: 1, 10: 4})
        out = m.one("Softmax", [z], {0: pick(rng, (0, 1, -1)), 1: 1})
    else:  # ShuffleChannel -> depthwise conv (a ShuffleNet unit's tail)
        g = pick(rng, [k for k in (2, 3, 4) if oc % k == 0])
        z = m.one("ShuffleChannel", [y], {0: g})
        out = _conv(m, rng, z, oc, oc, k=3, depthwise=True)
    return _finish(rng, m, [tensor(rng, (c, h, w))], [y, z, out], "Chain@reshape", 2)


def interp(rng):
    """FPN top-down: a coarse conv upsampled by Interp and added to a lateral conv of the
    fine input [-> conv]; or conv -> Interp -> conv."""
    m = _Model()
    c, oc = _chans(rng), _chans(rng)
    h, w = extent(rng, 1, 8), extent(rng, 1, 8)
    x = m.input()
    mode = pick(rng, (1, 2, 2, 3))
    if chance(rng, 0.5):
        coarse = m.input()
        ch, cw = extent(rng, 1, 5), extent(rng, 1, 5)
        h, w = 2 * ch, 2 * cw
        top = _conv(m, rng, coarse, c, oc, k=1, act=False)
        up = m.one("Interp", [top], {0: mode, 1: 2.0, 2: 2.0})
        lateral = _conv(m, rng, x, c, oc, k=1, act=False)
        pair = [up, lateral] if chance(rng, 0.5) else [lateral, up]
        s = m.one("BinaryOp", pair, {0: 0}) if chance(rng, 0.5) else m.one("Eltwise", pair, {0: 1})
        outs = [top, up, lateral, s]
        if chance(rng, 0.5):
            outs.append(_conv(m, rng, s, oc, _chans(rng), k=3))
        ins = [tensor(rng, (c, h, w)), tensor(rng, (c, ch, cw))]
        return _finish(rng, m, ins, outs, "Chain@interp", 3)
    y = _conv(m, rng, x, c, oc)
    if chance(rng, 0.5):
        p = {0: mode, 1: pick(rng, (0.5, 1.5, 2.0, 3.0)), 2: pick(rng, (0.5, 2.0, 2.5))}
        if int(h * p[1]) < 1 or int(w * p[2]) < 1:
            return None
    else:
        p = {0: mode, 3: extent(rng, 1, 16), 4: extent(rng, 1, 16)}
    if mode == 2 and chance(rng, 0.3):
        p[6] = 1
    z = m.one("Interp", [y], p)
    out = _conv(m, rng, z, oc, _chans(rng))
    return _finish(rng, m, [tensor(rng, (c, h, w))], [y, z, out], "Chain@interp", 2)


# layers ncnn runs in place (support_inplace), with params that keep the shape; no step
# functions (Threshold): after a convolution, fp16 rounding of an input at the step flips
# the output by a whole step, which is the format, not a bug
_INPLACE = _ACT_LAYERS + (
    ("AbsVal", lambda r: {}), ("Dropout", lambda r: {0: 0.5}), ("Power", lambda r: {0: 2.0, 1: 0.5, 2: 0.1}),
    ("UnaryOp", lambda r: {0: pick(r, (0, 1, 4, 16))}),
)


def split_inplace(rng):
    """x [-> conv] -> Split -> an in-place layer on one branch, another reader (conv,
    in-place layer, nothing) on the other -> BinaryOp / Eltwise / Concat of both: the
    in-place write must not reach the other reader."""
    m = _Model()
    d = pick(rng, (1, 2, 3, 3, 3, 4))
    c = _chans(rng)
    shp = {1: (c,), 2: (c, extent(rng, 1, 12)), 3: (c, extent(rng, 1, 9), extent(rng, 1, 9)),
           4: (c, extent(rng, 1, 4), extent(rng, 1, 5), extent(rng, 1, 5))}[d]
    x = m.input()
    outs, convs = [], 0
    if d == 3 and chance(rng, 0.4):
        x = _conv(m, rng, x, c, c, act=chance(rng, 0.3))
        outs.append(x)
        convs += 1
    n = pick(rng, (2, 2, 3))
    parts = m.add("Split", [x], {}, n)
    branches = []
    for i, p in enumerate(parts):
        kind = int(rng.integers(0, 3)) if i else 0
        if kind == 0:
            name, params = pick(rng, _INPLACE)
            branches.append(m.one(name, [p], params(rng)))
        elif kind == 1 and d == 3:
            branches.append(_conv(m, rng, p, c, c, act=chance(rng, 0.5)))
            convs += 1
        else:
            branches.append(p)  # read as is
    outs += branches
    join = int(rng.integers(0, 3))
    if join == 0:
        outs.append(m.one("BinaryOp", branches[:2], {0: pick(rng, (0, 1, 2, 4))}))
    elif join == 1:
        outs.append(m.one("Eltwise", branches, {0: pick(rng, (0, 1, 2))}))
    else:
        outs.append(m.one("Concat", branches, {0: 0}))
    return _finish(rng, m, [tensor(rng, shp)], outs, "Chain@split", convs)


# layers with no GPU kernel (vkncnn runs them on the host inside a GPU plan), with
# params that keep a (c, h, w) shape: each sits between two GPU layers, so its input is
# downloaded (unpacked, fp16 widened) and its output uploaded again
_HOST = (
    ("CumulativeSum", lambda r: {0: int(r.integers(-3, 3))}),
    ("Flip", lambda r: {0: sorted(set(int(a) for a in r.choice(3, size=int(r.integers(1, 3)))))}),
    ("MVN", lambda r: {0: int(r.integers(0, 2)), 1: int(r.integers(0, 2)), 2: 1e-3}),
)


def host(rng):
    """conv (GPU) -> a host-only layer -> BinaryOp with a GPU branch / conv / ReLU: the
    runtime's download and upload between the two, with fp16 storage and packed blobs."""
    m, c = _Model(), _chans(rng)
    h, w = extent(rng, 1, 10), extent(rng, 1, 10)
    x = m.input()
    a, b = m.add("Split", [x], {}, 2)
    oc = _chans(rng)
    y = _conv(m, rng, a, c, oc, k=pick(rng, (1, 3)))
    name, params = pick(rng, _HOST)
    z = m.one(name, [y], params(rng))
    if name == "CumulativeSum" and chance(rng, 0.3):  # GLU halves an even channel count
        if oc % 2 == 0:
            z = m.one("GLU", [z], {0: 0})
            oc //= 2
    kind = int(rng.integers(0, 3))
    if kind == 0:
        other = _conv(m, rng, b, c, oc, k=1, act=chance(rng, 0.5))
        out = m.one("BinaryOp", [z, other] if chance(rng, 0.5) else [other, z], {0: pick(rng, (0, 1, 2))})
        outs = [y, z, other, out]
    elif kind == 1:
        out = _conv(m, rng, z, oc, _chans(rng))
        outs = [y, z, out]
    else:
        out = m.one("ReLU", [z], {})
        outs = [y, z, out]
    return _finish(rng, m, [tensor(rng, (c, h, w))], outs, "Chain@host", 2)


def transformer(rng):
    """A pre-norm transformer block on (seq, dim): LayerNorm -> self-attention -> add ->
    LayerNorm -> Gemm -> GELU -> Gemm -> add, the attention and MLP each with a skip."""
    m = _Model()
    heads = pick(rng, (1, 2, 4))
    dim = heads * pick(rng, (2, 4, 8, 16))
    seq, hidden = extent(rng, 1, 12), pick(rng, (dim, 2 * dim, 4 * dim, 3 * dim + 1))
    x = m.input()
    a, b = m.add("Split", [x], {}, 2)
    n1 = m.one("LayerNorm", [a], {0: dim, 1: 1e-5, 2: 1})
    att = m.one("MultiHeadAttention", [n1], {0: dim, 1: heads, 2: dim * dim, 3: dim, 4: dim})
    r1 = m.one("BinaryOp", [b, att], {0: 0})
    c, d = m.add("Split", [r1], {}, 2)
    n2 = m.one("LayerNorm", [c], {0: dim, 1: 1e-5, 2: 1})
    f1 = m.one("Gemm", [n2], {5: 1, 8: hidden, 9: dim, 3: 1, 6: 1, 10: 4, 7: 0})
    g = m.one("GELU", [f1], {0: int(rng.integers(0, 2))})
    f2 = m.one("Gemm", [g], {5: 1, 8: dim, 9: hidden, 3: 1, 6: 1, 10: 4, 7: 0})
    out = m.one("BinaryOp", [d, f2], {0: 0})
    return _finish(rng, m, [tensor(rng, (seq, dim))], [att, r1, f1, out], "Chain@transformer", 3)


def shufflenet(rng):
    """ShuffleNet v2 unit: Slice channels in two (or Split) -> 1x1 conv, 3x3 depthwise,
    1x1 conv on one half -> Concat with the other -> ShuffleChannel: a Slice of packed
    channels at an odd half, and a Concat that repacks."""
    m = _Model()
    half = pick(rng, (2, 3, 4, 6, 8, 12, 16, 24))
    h, w = extent(rng, 1, 10), extent(rng, 1, 10)
    x = m.input()
    a, b = m.add("Slice", [x], {0: [half, -233], 1: 0}, 2)
    y = _conv(m, rng, b, half, half, k=1)
    y = _conv(m, rng, y, half, half, k=3, act=False, depthwise=True)
    y = _conv(m, rng, y, half, half, k=1)
    cat = m.one("Concat", [a, y] if chance(rng, 0.8) else [y, a], {0: 0})
    out = m.one("ShuffleChannel", [cat], {0: 2})
    return _finish(rng, m, [tensor(rng, (2 * half, h, w))], [a, y, cat, out], "Chain@shufflenet", 3)


def yolo_head(rng):
    """A detection head: conv -> Reshape to (anchors, c/anchors, h*w) -> Permute -> Sigmoid,
    two scales -> Concat along the boxes axis (axis 1 of 3-D blobs)."""
    m = _Model()
    anchors, per = pick(rng, (1, 2, 3)), pick(rng, (5, 6, 7, 85 // 5))
    c = _chans(rng)
    heads = []
    ins = []
    for _ in range(2):
        h, w = extent(rng, 1, 8), extent(rng, 1, 8)
        x = m.input()
        ins.append(tensor(rng, (c, h, w)))
        y = _conv(m, rng, x, c, anchors * per, k=1, act=False)
        r = m.one("Reshape", [y], {0: h * w, 1: per, 2: anchors})
        t = m.one("Permute", [r], {0: 1})  # (anchors, h*w, per)
        heads.append(m.one(pick(rng, ("Sigmoid", "Swish", "ReLU")), [t], {}))
    cat = m.one("Concat", heads, {0: pick(rng, (1, -2))})
    return _finish(rng, m, ins, heads + [cat], "Chain@yolo", 2)


GENERATORS = {
    "Chain@conv_act": conv_act,
    "Chain@residual": residual,
    "Chain@concat": concat,
    "Chain@reshape": reshape,
    "Chain@interp": interp,
    "Chain@split": split_inplace,
    "Chain@host": host,
    "Chain@transformer": transformer,
    "Chain@shufflenet": shufflenet,
    "Chain@yolo": yolo_head,
}
