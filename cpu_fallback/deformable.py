"""Deformable convolution (DCNv1/v2, torchvision's deform_conv2d; ncnn's DeformableConv2D)
as a numpy kernel: bilinear sampling at offset kernel taps, then one matrix product.

Kernel tap k = (i, j) of output pixel (y, x) reads the input at
(y*sh - pad_top + i*dh + dy, x*sw - pad_left + j*dw + dx), where (dy, dx) are offset
channels 2k and 2k + 1 at (y, x), bilinearly interpolated with zeros outside the
input, and scaled by mask channel k (DCNv2) when there is a mask. With G offset
groups (offset has 2*kh*kw*G channels) input channel c uses group c // (C / G).

All taps and pixels are gathered at once: four fancy-index gathers (one per bilinear
corner) build the (C*kh*kw, oh*ow) sample matrix, whose (c, i, j) row order is the
weights' [outc][inc][kh][kw] order, so the convolution is one matrix product.
"""

from __future__ import annotations

import numpy as np


def deformable_columns(x: np.ndarray, offset: np.ndarray, mask: np.ndarray | None, kernel_hw, stride_hw,
                       dilation_hw, pad_tl, out_hw) -> np.ndarray:
    """(C, H, W) input, offset (G*2*kh*kw, oh, ow), mask (G*kh*kw, oh, ow) or None ->
    (C*kh*kw, oh*ow) bilinear samples (mask applied)."""
    c, h, w = x.shape
    kh, kw = kernel_hw
    oh, ow = out_hw
    taps = kh * kw
    groups = offset.shape[0] // (2 * taps)
    off = offset.reshape(groups, taps, 2, oh * ow).astype(np.float32, copy=False)
    base_y = (np.arange(oh) * stride_hw[0] - pad_tl[0]).astype(np.float32)
    base_x = (np.arange(ow) * stride_hw[1] - pad_tl[1]).astype(np.float32)
    tap_y = (np.arange(kh) * dilation_hw[0]).repeat(kw).astype(np.float32)          # (taps,)
    tap_x = np.tile(np.arange(kw) * dilation_hw[1], kh).astype(np.float32)
    grid_y = (base_y[:, None] + np.zeros((1, ow), np.float32)).reshape(-1)           # (oh*ow,)
    grid_x = (np.zeros((oh, 1), np.float32) + base_x[None, :]).reshape(-1)
    ys = grid_y[None, None] + tap_y[None, :, None] + off[:, :, 0]                    # (G, taps, N)
    xs = grid_x[None, None] + tap_x[None, :, None] + off[:, :, 1]

    inside = (ys > -1) & (xs > -1) & (ys < h) & (xs < w)
    y0 = np.floor(ys)
    x0 = np.floor(xs)
    ly, lx = ys - y0, xs - x0
    y0 = y0.astype(np.int64)
    x0 = x0.astype(np.int64)
    planes = np.ascontiguousarray(x, np.float32).reshape(groups, c // groups, h * w)
    samples = np.zeros((groups, c // groups, taps, oh * ow), np.float32)
    for dy, dx, weight in ((0, 0, (1 - ly) * (1 - lx)), (0, 1, (1 - ly) * lx),
                           (1, 0, ly * (1 - lx)), (1, 1, ly * lx)):
        yy, xx = y0 + dy, x0 + dx
        valid = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        index = np.where(valid, yy * w + xx, 0)                                      # (G, taps, N)
        coeff = np.where(valid, weight, 0).astype(np.float32)
        for g in range(groups):
            samples[g] += planes[g][:, index[g]] * coeff[g][None]
    if mask is not None:
        samples *= mask.reshape(groups, 1, taps, oh * ow).astype(np.float32, copy=False)
    return samples.reshape(c * taps, oh * ow)
