"""Convolution and transposed convolution as numpy kernels (ncnn semantics).

Arrays are (channels, height, width) float32, as ncnn's 3-D Mat. Weights arrive
already prepared by the layer at load time:

- convolution weights as one matrix per group, `(groups, outc_g, inc_g*kh*kw)`:
  the row order (inc, kh, kw) of ncnn's `[outc][inc][kh][kw]` layout is exactly the
  row order of the im2col matrix, so a whole layer is ONE (batched) matrix product;
- transposed convolution weights as `(groups, outc_g*kh*kw, inc_g)`: one product
  gives every kernel tap's contribution, which is then scattered ("col2im") into
  the output with one strided add per tap.

When a group has a single input channel (depthwise), a matrix product would have
an inner dimension of kh*kw only; there the kernels loop over the kernel taps
instead and do one vectorised multiply-add over the whole tensor per tap.

Padding follows ncnn's make_padding: explicit pads when any is positive,
SAME_UPPER when all four are -233, SAME_LOWER when all four are -234.

These are the general kernels (int8's exact float64 sums, dynamic weights,
Convolution1D, Deconvolution). The fp32 Convolution layers run the faster,
shape-specialised ConvKernel of conv_kernels.py.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

SAME_UPPER = -233
SAME_LOWER = -234


# -- geometry ---------------------------------------------------------------------------
def kernel_extent(kernel: int, dilation: int) -> int:
    return dilation * (kernel - 1) + 1


def conv_padding(h: int, w: int, kernel_hw: tuple[int, int], stride_hw: tuple[int, int],
                 dilation_hw: tuple[int, int], pads: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) that ncnn adds before convolving an (h, w) plane.

    `pads` is (left, right, top, bottom) as the params give them.
    """
    left, right, top, bottom = pads
    if left > 0 or right > 0 or top > 0 or bottom > 0:
        if min(pads) < 0:
            # ncnn: -100 for a SAME pad among explicit ones, memory errors for other negatives
            raise ValueError(f"pads {pads} mix explicit and negative padding")
        return top, bottom, left, right
    if all(p in (SAME_UPPER, SAME_LOWER) for p in pads) and len(set(pads)) == 1:
        # tensorflow/onnx SAME: pad so that out = ceil(in / stride)
        ext_h = kernel_extent(kernel_hw[0], dilation_hw[0])
        ext_w = kernel_extent(kernel_hw[1], dilation_hw[1])
        hpad = ext_h + (h - 1) // stride_hw[0] * stride_hw[0] - h
        wpad = ext_w + (w - 1) // stride_hw[1] * stride_hw[1] - w
        if hpad <= 0 and wpad <= 0:
            return 0, 0, 0, 0
        small_h, small_w = _c_half(hpad), _c_half(wpad)
        if left == SAME_UPPER:  # the odd pixel goes to the bottom/right
            pads = small_h, hpad - small_h, small_w, wpad - small_w
        else:
            pads = hpad - small_h, small_h, wpad - small_w, small_w
        return same_crop_quirk(hpad, pads)
    return 0, 0, 0, 0


def same_crop_quirk(hpad: int, pads: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """ncnn quirk of SAME padding when one axis pads and the other needs a negative amount
    (kernel smaller than the stride): the negative amount crops. Measured against ncnn: the
    width's is split as the pads are (C's truncating halves), the height's all comes off
    the bottom rows."""
    if hpad >= 0:
        return pads
    _, _, left, right = pads
    return 0, hpad, left, right


def _c_half(n: int) -> int:
    """n / 2 rounded toward zero, as C's integer division."""
    return n // 2 if n >= 0 else -(-n // 2)


def pad_planes(x: np.ndarray, top: int, bottom: int, left: int, right: int, value=0.0) -> np.ndarray:
    """Constant-pad the last two axes, a negative amount cropping instead; returns `x`
    itself when there is nothing to do."""
    if top == bottom == left == right == 0:
        return x
    h, w = x.shape[-2:]
    x = x[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    top, bottom, left, right = (max(v, 0) for v in (top, bottom, left, right))
    return place_in_border(x, top, bottom, left, right, value)


def place_in_border(x: np.ndarray, top: int, bottom: int, left: int, right: int, value=0.0) -> np.ndarray:
    """x inside a constant border (non-negative widths), in x's dtype. Fills only the
    border strips and copies x once (np.pad does several passes and measured several
    times slower: docs/perf-notes.md, "Constant border written by hand, not np.pad")."""
    h, w = x.shape[-2:]
    out = np.empty(x.shape[:-2] + (h + top + bottom, w + left + right), x.dtype)
    fill = np.asarray(value).astype(x.dtype)
    out[..., :top, :] = fill
    out[..., top + h:, :] = fill
    out[..., top:top + h, :left] = fill
    out[..., top:top + h, left + w:] = fill
    out[..., top:top + h, left:left + w] = x
    return out


def _tap_view(x: np.ndarray, i: int, j: int, out_hw: tuple[int, int], stride_hw, dilation_hw) -> np.ndarray:
    """The (C, outh, outw) strided view of the input under kernel tap (i, j)."""
    oh, ow = out_hw
    sh, sw = stride_hw
    y0, x0 = i * dilation_hw[0], j * dilation_hw[1]
    return x[..., y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw]


# -- convolution ----------------------------------------------------------------------------
def im2col(x: np.ndarray, kernel_hw, stride_hw, dilation_hw, out_hw) -> np.ndarray:
    """(C, H, W) -> (C*kh*kw, outh*outw): every receptive field as a column.

    The windows are a zero-copy strided view; only the final reshape copies.
    """
    c = x.shape[0]
    kh, kw = kernel_hw
    sh, sw = stride_hw
    dh, dw = dilation_hw
    oh, ow = out_hw
    sc, sy, sx = x.strides
    windows = as_strided(x, shape=(c, kh, kw, oh, ow),
                         strides=(sc, dh * sy, dw * sx, sh * sy, sw * sx), writeable=False)
    return windows.reshape(c * kh * kw, oh * ow)


def im2col_rows(x: np.ndarray, kernel_hw, dilation_hw, out_hw) -> np.ndarray:
    """im2col for a stride-1 convolution on small planes, in two copies of longer rows.

    im2col's single copy moves one window row (ow floats) at a time: 7 floats on a 7x7
    output, where numpy's per-row overhead dominates. Here the kw column shifts of every
    padded row are copied first, as (C, kw, H, ow) planes; in those, the (oh, ow) block
    of kernel tap (i, j) is contiguous (rows i*dh .. i*dh + oh), so the second copy
    moves whole oh*ow blocks. Same result as im2col. Measured alone, it is faster on
    outputs up to 28x28 and slower from 56x56 (figures: docs/perf-notes.md, "im2col in
    two copies of longer rows on small planes"): ConvKernel takes it up to
    IM2COL_ROWS_MAX_W.
    """
    c, h, _ = x.shape
    kh, kw = kernel_hw
    dh, dw = dilation_hw
    oh, ow = out_hw
    sc, sy, sx = x.strides
    shifts = np.empty((c, kw, h, ow), x.dtype)
    np.copyto(shifts, as_strided(x, (c, kw, h, ow), (sc, dw * sx, sy, sx), writeable=False))
    cols = np.empty((c, kh, kw, oh * ow), x.dtype)
    tc, tj, ty, _ = shifts.strides
    blocks = as_strided(shifts, (c, kh, kw, oh * ow), (tc, dh * ty, tj, shifts.itemsize), writeable=False)
    np.copyto(cols, blocks)
    return cols.reshape(c * kh * kw, oh * ow)


def im2col_phases(x: np.ndarray, kernel_hw, stride_hw, out_hw) -> np.ndarray:
    """im2col for a strided, undilated convolution with a large kernel, via the stride's phases.

    im2col's copy reads every window row with the stride as its step. Here the input is
    first split once into its sh*sw phases (x[c, ri::sh, rj::sw]); the taps (ri + sh*qi,
    rj + sw*qj) then read phase (ri, rj) at unit step, sh*sw strided copies in all.
    Measured against im2col: faster on large kernels (ResNet's 7x7 stride-2 conv1,
    AlexNet's 11x11 stride 4), even at 5x5 stride 2, slower at 3x3 stride 2, so ConvKernel
    takes it from 7x7 up (figures: docs/perf-notes.md, "im2col through the stride's phases
    for large strided kernels").
    """
    c, h, w = x.shape
    kh, kw = kernel_hw
    sh, sw = stride_hw
    oh, ow = out_hw
    phases = np.empty((sh, sw, c, -(-h // sh), -(-w // sw)), x.dtype)
    for ri in range(sh):
        for rj in range(sw):
            part = x[:, ri::sh, rj::sw]
            phases[ri, rj, :, :part.shape[1], :part.shape[2]] = part
    cols = np.empty((c, kh, kw, oh, ow), x.dtype)
    for ri in range(min(sh, kh)):
        for rj in range(min(sw, kw)):
            phase = phases[ri, rj]
            sc, sy, sx = phase.strides
            taps = (c, len(range(ri, kh, sh)), len(range(rj, kw, sw)), oh, ow)
            np.copyto(cols[:, ri::sh, rj::sw], as_strided(phase, taps, (sc, sy, sx, sy, sx), writeable=False))
    return cols.reshape(c * kh * kw, oh * ow)


def conv2d(x: np.ndarray, weight: np.ndarray, kernel_hw, stride_hw=(1, 1), dilation_hw=(1, 1),
           bias: np.ndarray | None = None, dtype=np.float32) -> np.ndarray:
    """Convolve an already padded (C, H, W) input.

    weight: (groups, outc_g, inc_g*kh*kw). Returns (outc, outh, outw) in `dtype`
    (float64 lets the int8 path accumulate exactly).
    """
    groups, outc_g, k_g = weight.shape
    c, h, w = x.shape
    kh, kw = kernel_hw
    inc_g = k_g // (kh * kw)
    oh = (h - kernel_extent(kh, dilation_hw[0])) // stride_hw[0] + 1
    ow = (w - kernel_extent(kw, dilation_hw[1])) // stride_hw[1] + 1
    x = np.ascontiguousarray(x, dtype=dtype)
    weight = weight.astype(dtype, copy=False)
    if inc_g == 1 and kh * kw > 1:
        out = _conv_taps(x, weight.reshape(groups, outc_g, kh, kw), (oh, ow), stride_hw, dilation_hw)
    else:
        if kh == kw == 1:
            cols = x[:, ::stride_hw[0], ::stride_hw[1]][:, :oh, :ow].reshape(c, oh * ow)
        else:
            cols = im2col(x, kernel_hw, stride_hw, dilation_hw, (oh, ow))
        if groups == 1:
            out = weight[0] @ cols
        else:
            out = np.matmul(weight, cols.reshape(groups, k_g, oh * ow))
    out = out.reshape(groups * outc_g, oh, ow)
    if bias is not None:
        out += bias.astype(dtype, copy=False)[:, None, None]
    return out


def _conv_taps(x: np.ndarray, weight: np.ndarray, out_hw, stride_hw, dilation_hw) -> np.ndarray:
    """One input channel per group: a multiply-add per kernel tap over the whole tensor."""
    groups, outc_g, kh, kw = weight.shape
    out = np.zeros((groups, outc_g) + tuple(out_hw), dtype=x.dtype)
    product = np.empty_like(out)  # one scratch buffer for every tap, not a temporary each
    for i in range(kh):
        for j in range(kw):
            tap = _tap_view(x, i, j, out_hw, stride_hw, dilation_hw)  # (groups, oh, ow)
            np.multiply(weight[:, :, i, j, None, None], tap[:, None], out=product)
            out += product
    return out


def prepare_conv_weight(weight: np.ndarray, num_output: int, groups: int, kernel_hw) -> np.ndarray:
    """ncnn's flat [outc][inc_g][kh][kw] weights as (groups, outc_g, inc_g*kh*kw)."""
    return np.ascontiguousarray(weight.reshape(groups, num_output // groups, -1))


# -- transposed convolution --------------------------------------------------------------------
def prepare_deconv_weight(weight: np.ndarray, num_output: int, groups: int, kernel_hw) -> np.ndarray:
    """ncnn's flat [outc_g..][inc_g][kh][kw] per group as (groups, outc_g*kh*kw, inc_g)."""
    kh, kw = kernel_hw
    outc_g = num_output // groups
    w = weight.reshape(groups, outc_g, -1, kh, kw)              # g, o, i, kh, kw
    return np.ascontiguousarray(w.transpose(0, 1, 3, 4, 2).reshape(groups, outc_g * kh * kw, -1))


def deconv2d(x: np.ndarray, weight: np.ndarray, kernel_hw, stride_hw=(1, 1), dilation_hw=(1, 1),
             output_pad_hw=(0, 0), bias: np.ndarray | None = None) -> np.ndarray:
    """Transposed convolution of a (C, H, W) input, before any padding is cut away.

    weight: (groups, outc_g*kh*kw, inc_g). Output size is
    (in - 1) * stride + kernel_extent + output_pad, as ncnn; the output_pad strip
    receives the bias only.
    """
    groups, rows_g, inc_g = weight.shape
    c, h, w = x.shape
    kh, kw = kernel_hw
    sh, sw = stride_hw
    outc_g = rows_g // (kh * kw)
    outc = groups * outc_g
    oh = (h - 1) * sh + kernel_extent(kh, dilation_hw[0]) + output_pad_hw[0]
    ow = (w - 1) * sw + kernel_extent(kw, dilation_hw[1]) + output_pad_hw[1]
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros((outc, oh, ow), np.float32)
    if bias is not None:
        out += bias.astype(np.float32, copy=False)[:, None, None]

    if inc_g == 1 and kh * kw > 1:
        # depthwise: each tap is input * a per-(group, output) scalar
        taps = weight.reshape(groups, outc_g, kh, kw)
        xg = x[:, None]                                          # (groups, 1, h, w)
        for i in range(kh):
            for j in range(kw):
                dst = _scatter_view(out, i, j, (h, w), stride_hw, dilation_hw)
                dst += (taps[:, :, i, j, None, None] * xg).reshape(outc, h, w)
        return out

    # one product for every tap of every output channel: (groups, outc_g*kh*kw, h*w)
    if groups == 1:
        cols = weight[0] @ x.reshape(c, h * w)
    else:
        cols = np.matmul(weight, x.reshape(groups, inc_g, h * w))
    cols = cols.reshape(outc, kh, kw, h, w)
    if kh == kw == 1 and sh == sw == 1 and output_pad_hw == (0, 0):
        out += cols[:, 0, 0]
        return out
    for i in range(kh):
        for j in range(kw):
            dst = _scatter_view(out, i, j, (h, w), stride_hw, dilation_hw)
            dst += cols[:, i, j]
    return out


def _scatter_view(out: np.ndarray, i: int, j: int, in_hw, stride_hw, dilation_hw) -> np.ndarray:
    """The output positions that kernel tap (i, j) of every input pixel lands on."""
    h, w = in_hw
    sh, sw = stride_hw
    y0, x0 = i * dilation_hw[0], j * dilation_hw[1]
    return out[:, y0:y0 + (h - 1) * sh + 1:sh, x0:x0 + (w - 1) * sw + 1:sw]


def deconv_cut(out: np.ndarray, pads: tuple[int, int, int, int], output_hw: tuple[int, int]):
    """Cut ncnn's deconvolution padding: returns the cropped array, or None when ncnn
    would produce nothing (output_w/h given without a SAME pad mode).

    pads: (left, right, top, bottom); output_hw: (output_h, output_w), 0 = unset.
    """
    box = cut_box(out.shape[-2], out.shape[-1], pads, output_hw)
    if box is None:
        return None
    top, left, h, w = box
    return out[..., top:top + h, left:left + w]


def cut_box(full_h: int, full_w: int, pads: tuple[int, int, int, int], output_hw: tuple[int, int]):
    """(top, left, h, w) of the part of a full_h x full_w deconvolution output that ncnn keeps,
    or None where it keeps nothing. Arithmetic on sizes: the GPU path, which never makes the
    full output (a hostile stride makes it terabytes), cuts by it too.

    pads: (left, right, top, bottom); output_hw: (output_h, output_w), 0 = unset.
    """
    left, right, top, bottom = pads
    if left > 0 or right > 0 or top > 0 or bottom > 0:
        if min(pads) < 0:
            return None
    elif output_hw[0] > 0 and output_hw[1] > 0:
        hcut, wcut = full_h - output_hw[0], full_w - output_hw[1]
        if SAME_UPPER in pads:
            top, bottom, left, right = hcut // 2, hcut - hcut // 2, wcut // 2, wcut - wcut // 2
        elif SAME_LOWER in pads:
            top, bottom, left, right = hcut - hcut // 2, hcut // 2, wcut - wcut // 2, wcut // 2
        else:
            return None
        if hcut < 0 or wcut < 0:
            return None
    else:
        return 0, 0, full_h, full_w
    if top + bottom >= full_h or left + right >= full_w:
        return None
    return top, left, full_h - top - bottom, full_w - left - right


# -- int8 (ncnn's quantized inference) ---------------------------------------------------------
def float2int8(v: np.ndarray) -> np.ndarray:
    """ncnn's float -> int8: round half away from zero (done as trunc(v +- 0.5) in
    float32, as its SIMD code does), then clamp to [-127, 127]."""
    v = np.asarray(v, np.float32)
    half = np.copysign(np.float32(0.5), v).astype(np.float32)
    return np.clip(np.trunc(v + half), -127, 127).astype(np.int8)


def quantize(x: np.ndarray, scale) -> np.ndarray:
    """float -> int8 with a scalar or broadcastable scale (ncnn's quantize_to_int8)."""
    return float2int8(np.asarray(x, np.float32) * np.asarray(scale, np.float32))


def dequantize_scales(bottom_scale, weight_scales) -> np.ndarray:
    """1 / (bottom_scale * weight_scale) per output, 0 where the weight scale is 0 (ncnn)."""
    ws = np.asarray(weight_scales, np.float32)
    prod = np.float32(bottom_scale) * ws
    with np.errstate(divide="ignore"):
        return np.where(ws == 0, np.float32(0), np.float32(1) / prod).astype(np.float32)
