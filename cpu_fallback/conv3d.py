"""Volumetric convolution and transposed convolution (ncnn's *3D layers) as numpy kernels.

Arrays are (channels, depth, height, width) float32, as ncnn's 4-D Mat. As in conv.py,
weights arrive prepared by the layer at load time:

- convolution weights as `(groups, outc_g, inc_g*kd*kh*kw)`: ncnn's
  `[outc][inc_g][kd][kh][kw]` rows are already in im2col's row order, so a layer is one
  strided im2col copy plus one (batched) matrix product;
- transposed convolution weights as `(groups, outc_g*kd*kh*kw, inc_g)`: one product
  gives every tap's contribution, scattered into the output with one strided add per tap.

Padding follows ncnn's make_padding on three axes: explicit pads when any is positive,
SAME_UPPER when all six are -233, SAME_LOWER when all six are -234 (ncnn's SAME_LOWER
puts the odd pad of the depth axis after, like SAME_UPPER: kept); a SAME amount that
comes out negative on one axis (kernel smaller than stride) crops there, as ncnn's
copy_make_border_3d does.
"""

from __future__ import annotations

from itertools import product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .conv import SAME_LOWER, SAME_UPPER, _c_half, kernel_extent
from .shape import PAD_CONSTANT, pad_last_axes


def same_or_explicit_pads(sizes, kernels, strides, dilations, pads) -> list[tuple[int, int]] | None:
    """(before, after) per spatial axis that ncnn adds before a convolution.

    `pads` is ((before, after), ...) as the params give them, one pair per axis. Returns
    None for pads that ncnn cannot use (a negative amount among explicit ones).
    """
    flat = [p for pair in pads for p in pair]
    if any(p > 0 for p in flat):
        return None if min(flat) < 0 else [tuple(pair) for pair in pads]
    mode = flat[0]
    if mode in (SAME_UPPER, SAME_LOWER) and all(p == mode for p in flat):
        amounts = [kernel_extent(k, d) + (n - 1) // s * s - n
                   for n, k, s, d in zip(sizes, kernels, strides, dilations)]
        if all(a <= 0 for a in amounts):
            return [(0, 0)] * len(sizes)
        halves = [_c_half(a) for a in amounts]   # C division: a negative amount crops
        if mode == SAME_UPPER:                   # the odd pixel goes after
            pairs = [(h, a - h) for h, a in zip(halves, amounts)]
        else:
            pairs = [(a - h, h) for h, a in zip(halves, amounts)]
            if len(sizes) == 3:  # ncnn's SAME_LOWER pads depth the SAME_UPPER way: kept to match it
                pairs[0] = (halves[0], amounts[0] - halves[0])
        if len(sizes) != 3:
            return pairs
        # ncnn's copy_make_border_3d crops a negative amount before the depth or height
        # axis from the end instead (rows are copied from the first on); on w it crops
        # in front as copy_make_border does. Measured against pip ncnn; kept to match it
        return [(0, b + a) if b < 0 and axis < 2 else (b, a) for axis, (b, a) in enumerate(pairs)]
    return [(0, 0)] * len(sizes)


def pad_volume(x: np.ndarray, pads: list[tuple[int, int]], value: float = 0.0) -> np.ndarray:
    """Constant-pad the trailing len(pads) axes (a negative amount crops); x itself when no-op."""
    if all(b == 0 and a == 0 for b, a in pads):
        return x
    return pad_last_axes(x, pads, PAD_CONSTANT, value)


def output_extent(padded: int, kernel: int, stride: int, dilation: int) -> int:
    return (padded - kernel_extent(kernel, dilation)) // stride + 1


def im2col3d(x: np.ndarray, kernel, stride, dilation, out_size) -> np.ndarray:
    """(C, D, H, W) -> (C*kd*kh*kw, od*oh*ow): every receptive field as a column, from a
    zero-copy strided view (the reshape is the one copy)."""
    c = x.shape[0]
    sc, sz, sy, sx = x.strides
    windows = as_strided(x, shape=(c, *kernel, *out_size),
                         strides=(sc, dilation[0] * sz, dilation[1] * sy, dilation[2] * sx,
                                  stride[0] * sz, stride[1] * sy, stride[2] * sx), writeable=False)
    return windows.reshape(c * int(np.prod(kernel)), int(np.prod(out_size)))


def prepare_conv3d_weight(weight: np.ndarray, num_output: int, groups: int) -> np.ndarray:
    """ncnn's flat [outc][inc_g][kd][kh][kw] weights as (groups, outc_g, inc_g*kd*kh*kw)."""
    return np.ascontiguousarray(np.asarray(weight, np.float32).reshape(groups, num_output // groups, -1))


def conv3d(x: np.ndarray, weight: np.ndarray, kernel, stride, dilation,
           bias: np.ndarray | None = None) -> np.ndarray:
    """Convolve an already padded (C, D, H, W) input; weight (groups, outc_g, inc_g*taps)."""
    groups, outc_g, k_g = weight.shape
    out_size = tuple(output_extent(n, k, s, d) for n, k, s, d in zip(x.shape[1:], kernel, stride, dilation))
    x = np.ascontiguousarray(x, np.float32)
    cols = im2col3d(x, kernel, stride, dilation, out_size)
    if groups == 1:
        out = weight[0] @ cols
    else:
        out = np.matmul(weight, cols.reshape(groups, k_g, -1))
    out = out.reshape(groups * outc_g, *out_size)
    if bias is not None:
        out += np.asarray(bias, np.float32)[:, None, None, None]
    return out


def prepare_deconv3d_weight(weight: np.ndarray, num_output: int, groups: int, kernel) -> np.ndarray:
    """ncnn's flat [outc_g][inc_g][kd][kh][kw] per group as (groups, outc_g*kd*kh*kw, inc_g)."""
    outc_g = num_output // groups
    w = np.asarray(weight, np.float32).reshape(groups, outc_g, -1, *kernel)      # g, o, i, kd, kh, kw
    return np.ascontiguousarray(w.transpose(0, 1, 3, 4, 5, 2).reshape(groups, outc_g * int(np.prod(kernel)), -1))


def deconv3d(x: np.ndarray, weight: np.ndarray, kernel, stride, dilation, output_pad,
             bias: np.ndarray | None = None) -> np.ndarray:
    """Transposed convolution of a (C, D, H, W) input before any cut: each spatial extent is
    (in - 1) * stride + kernel_extent + output_pad; the output_pad strip gets the bias only."""
    groups, rows_g, inc_g = weight.shape
    c, *size = x.shape
    taps = int(np.prod(kernel))
    outc = groups * (rows_g // taps)
    full = [(n - 1) * s + kernel_extent(k, d) + p for n, k, s, d, p in zip(size, kernel, stride, dilation, output_pad)]
    out = np.zeros((outc, *full), np.float32)
    if bias is not None:
        out += np.asarray(bias, np.float32)[:, None, None, None]
    flat = np.ascontiguousarray(x, np.float32).reshape(groups, inc_g, -1)
    cols = (weight[0] @ flat[0]) if groups == 1 else np.matmul(weight, flat)
    cols = cols.reshape(outc, *kernel, *size)
    for tap in product(*(range(k) for k in kernel)):
        window = tuple(slice(t * d, t * d + (n - 1) * s + 1, s) for t, d, n, s in zip(tap, dilation, size, stride))
        out[(slice(None), *window)] += cols[(slice(None), *tap)]
    return out


def deconv_cut3d(out: np.ndarray, pads: list[tuple[int, int]], output_size) -> np.ndarray | None:
    """Cut ncnn's deconvolution padding from the trailing spatial axes.

    pads: (before, after) per axis as the params give them; output_size: the wanted
    extents (all must be set for a cut). Returns None where ncnn would give no result or garbage
    (negative explicit pads, an output size without a SAME pad mode, or a cut that
    leaves nothing).
    """
    flat = [p for pair in pads for p in pair]
    spatial = out.shape[out.ndim - len(pads):]
    if any(p > 0 for p in flat):
        if min(flat) < 0:
            return None
        cuts = [tuple(pair) for pair in pads]
    elif all(o > 0 for o in output_size):
        excess = [n - o for n, o in zip(spatial, output_size)]
        if min(excess) < 0:
            return None
        if SAME_UPPER in flat:
            cuts = [(e // 2, e - e // 2) for e in excess]
        elif SAME_LOWER in flat:
            cuts = [(e - e // 2, e // 2) for e in excess]
        else:
            return None
    else:
        return out
    if any(b + a >= n for (b, a), n in zip(cuts, spatial)):
        return None
    lead = (slice(None),) * (out.ndim - len(pads))
    return out[lead + tuple(slice(b, n - a) for (b, a), n in zip(cuts, spatial))]
