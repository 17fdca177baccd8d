"""Fold and Unfold (PyTorch's nn.Fold / nn.Unfold, ncnn's Fold / Unfold) as numpy kernels.

Unfold is im2col: (c, h, w) -> (c*kh*kw, oh*ow), every receptive field a column
(conv.im2col, one strided copy). Fold is its adjoint, col2im: each column is added
back onto the window it came from, one strided add per kernel tap.
"""

from __future__ import annotations

import numpy as np

from .conv import im2col, kernel_extent


def unfold(x: np.ndarray, kernel_hw, stride_hw, dilation_hw) -> np.ndarray:
    """Already padded (c, H, W) -> (c*kh*kw, oh*ow)."""
    oh = (x.shape[1] - kernel_extent(kernel_hw[0], dilation_hw[0])) // stride_hw[0] + 1
    ow = (x.shape[2] - kernel_extent(kernel_hw[1], dilation_hw[1])) // stride_hw[1] + 1
    return im2col(np.ascontiguousarray(x, np.float32), kernel_hw, stride_hw, dilation_hw, (oh, ow))


def fold(cols: np.ndarray, channels: int, padded_hw, kernel_hw, stride_hw, dilation_hw, blocks_hw) -> np.ndarray:
    """(channels*kh*kw, bh*bw) columns summed into a zero (channels, H, W) plane, where
    (bh, bw) = blocks_hw is the number of window positions per axis."""
    kh, kw = kernel_hw
    sh, sw = stride_hw
    dh, dw = dilation_hw
    bh, bw = blocks_hw
    out = np.zeros((channels, *padded_hw), np.float32)
    taps = np.asarray(cols, np.float32).reshape(channels, kh, kw, bh, bw)
    for i in range(kh):
        for j in range(kw):
            out[:, i * dh:i * dh + (bh - 1) * sh + 1:sh, j * dw:j * dw + (bw - 1) * sw + 1:sw] += taps[:, i, j]
    return out
