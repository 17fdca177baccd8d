"""Fuzz cases for int8 and storage types: Cast, Quantize, Dequantize, Requantize; and int8
models whose weights are stored as int8 (flag 0x000D4B38) with their scales
(`<Layer>@int8`: Convolution, ConvolutionDepthWise, InnerProduct, Gemm, MultiHeadAttention).

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from . import attention, conv, matrix, storage
from .case import Case
from .draw import activation, chance, dims, extent, floats, pick, shape, tensor


def cast(rng):
    """fp32 -> fp16 (and the identities): values past fp16's range become inf, tiny ones subnormal."""
    x = tensor(rng, shape(rng, dims(rng), 1, 9), -4.0, 4.0) * np.float32(pick(rng, (1.0, 1e-6, 3e4, 1e5)))
    pair = pick(rng, ((1, 2), (1, 2), (1, 1), (2, 2)))
    paths = ("cpu", "gpu") if pair == (1, 2) else ("cpu", "gpu", "gpu16")  # fp16 storage rounds fp32 input
    return Case("Cast", {0: pair[0], 1: pair[1]}, [x.astype(np.float32)], paths=paths)


def _table(rng, n: int, lo: float, hi: float) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float32)


def _table_size(rng, x) -> int:
    """One value for the whole blob, or one per ncnn channel (w of 1-D, h of 2-D, c of 3-D/4-D)."""
    return x.shape[0] if chance(rng, 0.6) else 1


def quantize(rng):
    x = tensor(rng, shape(rng, dims(rng), 1, 9), -4.0, 4.0)
    n = _table_size(rng, x)
    return Case("Quantize", {0: n}, [x], weights=[_table(rng, n, 5.0, 60.0)])


def _accumulators(rng):
    return rng.integers(-3000, 3001, shape(rng, dims(rng), 1, 9)).astype(np.int32)


def dequantize(rng):
    x = _accumulators(rng)
    sn, bn = _table_size(rng, x), pick(rng, (0, 1, x.shape[0]))
    weights = [_table(rng, sn, 1e-3, 1e-2)] + ([_table(rng, bn, -1, 1)] if bn else [])
    return Case("Dequantize", {0: sn, 1: bn}, [x], weights=weights)


def requantize(rng):
    x = _accumulators(rng)
    si, so, bn = _table_size(rng, x), _table_size(rng, x), pick(rng, (0, 1, x.shape[0]))
    p = {0: si, 1: so, 2: bn}
    act = activation(rng)
    if act:
        p[3] = act[9]
        if 10 in act:
            p[4] = act[10]
    weights = [_table(rng, si, 1e-3, 1e-2), _table(rng, so, 20, 60)] + ([_table(rng, bn, -1, 1)] if bn else [])
    return Case("Requantize", p, [x], weights=weights, tol16=2e-2)


# -- int8-stored weights -----------------------------------------------------------------------
def _int8_weights(rng, n: int) -> np.ndarray:
    return rng.integers(-127, 128, n).astype(np.int8)


def _int8_conv(rng, depthwise: bool):
    base = conv.convolution_depthwise(rng) if depthwise else conv.convolution(rng)
    if base is None or 19 in base.params or base.inputs[0].ndim != 3:
        return None
    p = {k: v for k, v in base.params.items() if k != 18}
    outc, group = p[0], p.get(7, 1)
    terms = (1, 2, 101, 102) if depthwise else (1, 101)
    p[8] = pick(rng, terms)
    n_scales = {1: group, 2: 1, 101: group, 102: 1}[p[8]] if depthwise else outc
    parts = [storage.int8(_int8_weights(rng, p[6]))]
    if p[5]:
        parts.append(storage.raw(_table(rng, outc, -1, 1)))
    parts.append(storage.raw(_table(rng, n_scales, 40, 200)))  # weight scales: |w| up to ~3
    parts.append(storage.raw(_table(rng, 1, 40, 120)))  # bottom scale: inputs within +-1.5
    if p[8] > 100:
        parts.append(storage.raw(_table(rng, 1, 5, 40)))  # top scale: the output requantized
    # an int8 output (term > 100) may differ by one step where x86 ncnn's depthwise requantize
    # lands a hair across .5 (measured: 31.497 -> 32); a float output must agree closely
    tol = 2e-2 if p[8] > 100 else 1e-3
    return Case(base.type_name, p, base.inputs, weights=b"".join(parts), tol=tol, tol16=2e-2,
                step=1.0 if p[8] > 100 else 0.0)


def convolution_int8(rng):
    return _int8_conv(rng, False)


def convolutiondepthwise_int8(rng):
    return _int8_conv(rng, True)


def innerproduct_int8(rng):
    base = matrix.innerproduct(rng)
    p = dict(base.params)
    p[8] = 1
    outc = p[0]
    parts = [storage.int8(_int8_weights(rng, p[2]))]
    if p.get(1):
        parts.append(storage.raw(_table(rng, outc, -1, 1)))
    parts += [storage.raw(_table(rng, outc, 40, 200)), storage.raw(_table(rng, 1, 40, 120))]
    return Case("InnerProduct", p, base.inputs, weights=b"".join(parts), tol=1e-3, tol16=2e-2)


def gemm_int8(rng):
    """Gemm with int8_scale_term: a constant A or B stored int8 (with its scales) or fp32,
    or both operands blobs (quantized on the fly), any C, transposes, alpha / beta."""
    M, N, K = extent(rng, 1, 17), extent(rng, 1, 17), extent(rng, 1, 19)
    ta, tb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    p = {2: ta, 3: tb, 18: 1}
    if chance(rng, 0.4):
        p[0] = floats(rng, 1, -2.0, 2.0)[0]
    if chance(rng, 0.4):
        p[1] = floats(rng, 1, -2.0, 2.0)[0]
    const = pick(rng, ("B", "B", "A", "none"))
    # constants are int8-stored, as ncnn2int8 writes them: given an fp32-stored constant,
    # x86 ncnn's int8 Gemm returns values matching no quantization of it (measured)
    ins, parts, tail = [], [], []
    a_shape, b_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    if const == "A":
        p.update({4: 1, 7: M, 9: K})
        parts.append(storage.int8(_int8_weights(rng, M * K)))
        tail.append(storage.raw(_table(rng, M, 40, 200)))
    else:
        ins.append(tensor(rng, a_shape))
    if const == "B":
        p.update({5: 1, 8: N, 9: K})
        parts.append(storage.int8(_int8_weights(rng, N * K)))
        tail.append(storage.raw(_table(rng, 1, 40, 200)))
    else:
        ins.append(tensor(rng, b_shape))
    ctype = pick(rng, (-1, 0, 1, 2, 3, 4))
    if ctype >= 0 and const != "none" and chance(rng, 0.6):
        p.update({6: 1, 10: ctype, 7: M, 8: N})
        c_shape = {0: (1,), 1: (M,), 2: (M, 1), 3: (M, N), 4: (1, N)}[ctype]
        parts.append(storage.fp32(tensor(rng, c_shape)))
    elif ctype >= 0:
        ins.append(tensor(rng, {0: (1,), 1: (M,), 2: (M, 1), 3: (M, N), 4: (1, N)}[ctype]))
    if chance(rng, 0.2):
        p[14] = 1
    if chance(rng, 0.15):
        p[11] = 1
    return Case("Gemm", p, ins, weights=b"".join(parts + tail), tol=1e-3, tol16=2e-2)


def multiheadattention_int8(rng):
    """MultiHeadAttention with int8_scale_term (18): the four projections int8 with per-row scales."""
    base = attention.multiheadattention(rng)
    if base is None:
        return None
    p = dict(base.params)
    p[18] = 1
    embed = p[0]
    qdim = p[2] // embed
    parts = []
    for n_in, n_out in ((qdim, embed), (p[3], embed), (p[4], embed), (embed, qdim)):
        parts += [storage.int8(_int8_weights(rng, n_in * n_out)), storage.raw(_table(rng, n_out, -0.5, 0.5))]
    for _ in range(3):
        parts.append(storage.raw(_table(rng, embed, 100, 400)))
    parts.append(storage.raw(_table(rng, 1, 100, 400)))
    return Case("MultiHeadAttention", p, base.inputs, weights=b"".join(parts), tol=2e-3, tol16=3e-2)


INT8 = {
    "Convolution@int8": convolution_int8,
    "ConvolutionDepthWise@int8": convolutiondepthwise_int8,
    "InnerProduct@int8": innerproduct_int8,
    "Gemm@int8": gemm_int8,
    "MultiHeadAttention@int8": multiheadattention_int8,
}
