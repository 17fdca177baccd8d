"""Unfold (PyTorch nn.Unfold, im2col): (c, h, w) -> (c*kernel_h*kernel_w, out_h*out_w).

Params as Convolution's window: 1/11 kernel, 2/12 dilation, 3/13 stride, pads 4 left,
15 right, 14 top, 16 bottom (explicit, or all -233 SAME_UPPER / -234 SAME_LOWER),
18 pad_value; 0 num_output is read and unused, as in ncnn. A 2-D blob is one channel.
Runs on numpy in GPU nets too.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv, fold
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer

from .common.alloc_limit import check_elements, check_window, out_extent
from .convolution import load_window_params


@register_layer("Unfold")
class Unfold(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window_params(self, pd)
        self.pad_value = pd.get(18, 0.0)
        check_fold_window(self)
        pads = self.pads
        if max(pads) > 0 and min(pads) < 0:
            raise ParamError(f"pads (4/15/14/16) {pads} mix positive and negative values")
        return 0

    @property
    def pads(self) -> tuple[int, int, int, int]:
        return self.pad_left, self.pad_right, self.pad_top, self.pad_bottom

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 4 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim == 2:
            x = x[None]
        elif x.ndim == 1:
            x = x[None, None]
        if x.ndim != 3:
            raise ShapeError(f"Unfold takes a (c, h, w) blob, got shape {bottoms[0].shape}")
        kernel = (self.kernel_h, self.kernel_w)
        stride, dilation = (self.stride_h, self.stride_w), (self.dilation_h, self.dilation_w)
        top, bottom, left, right = conv.conv_padding(x.shape[1], x.shape[2], kernel, stride, dilation, self.pads)
        ph, pw = x.shape[1] + top + bottom, x.shape[2] + left + right
        check_elements(x.shape[0] * ph * pw * self.kernel_h * self.kernel_w, "the padded input's columns")
        taps = self.kernel_h * self.kernel_w  # kernel, pads and dilation are params: no weights bound them
        out = max(out_extent(ph, kernel[0], stride[0], dilation[0]), 0) * \
            max(out_extent(pw, kernel[1], stride[1], dilation[1]), 0)
        check_window(opt, (x.shape[0], ph, pw), (x.shape[0] * taps, out))
        xp = conv.pad_planes(x.astype(np.float32, copy=False), top, bottom, left, right, self.pad_value)
        ext = (conv.kernel_extent(kernel[0], dilation[0]), conv.kernel_extent(kernel[1], dilation[1]))
        if xp.shape[1] < ext[0] or xp.shape[2] < ext[1]:
            raise ShapeError(f"input {x.shape[1]}x{x.shape[2]} (padded {xp.shape[1]}x{xp.shape[2]}) is smaller "
                             f"than the kernel extent {ext[0]}x{ext[1]}")
        return [fold.unfold(xp, kernel, stride, dilation)]


def check_fold_window(layer) -> None:
    """Positive kernel, stride and dilation on both axes (shared with Fold)."""
    for name in ("kernel_w", "kernel_h", "stride_w", "stride_h", "dilation_w", "dilation_h"):
        if getattr(layer, name) <= 0:
            raise ParamError(f"{name} must be positive, got {getattr(layer, name)}")
