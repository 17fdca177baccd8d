"""Fold (PyTorch nn.Fold, col2im): (c*kernel_h*kernel_w, L) -> (c, output_h, output_w).

Each of the L columns is a window's worth of values; they are summed back onto the
(output + pads) plane at their window positions (overlaps add up), then the pads are
cut away. L must equal the number of window positions, as PyTorch requires (ncnn
reads past the row otherwise). Params: 1/11 kernel, 2/12 dilation, 3/13 stride,
pads 4 left, 15 right, 14 top, 16 bottom (non-negative), 20 output_w, 21 output_h;
0 num_output is read and unused, as in ncnn. Runs on numpy in GPU nets too.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv, fold
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .convolution import load_window_params
from .unfold import check_fold_window


@register_layer("Fold")
class Fold(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window_params(self, pd)
        self.output_w = pd.get(20, 0)
        self.output_h = pd.get(21, self.output_w)
        check_fold_window(self)
        if min(self.pad_left, self.pad_right, self.pad_top, self.pad_bottom) < 0:
            raise ParamError("Fold pads (4/15/14/16) must not be negative (no SAME mode)")
        if self.output_w <= 0 or self.output_h <= 0:
            raise ParamError(f"output_w/output_h (20/21) must be positive, got {self.output_w}/{self.output_h}")
        padded = (self.output_h + self.pad_top + self.pad_bottom, self.output_w + self.pad_left + self.pad_right)
        ext = (conv.kernel_extent(self.kernel_h, self.dilation_h), conv.kernel_extent(self.kernel_w, self.dilation_w))
        if padded[0] < ext[0] or padded[1] < ext[1]:
            raise ParamError(f"the padded output {padded[0]}x{padded[1]} is smaller than the kernel extent "
                             f"{ext[0]}x{ext[1]}")
        self.padded_hw = padded
        self.blocks_hw = ((padded[0] - ext[0]) // self.stride_h + 1, (padded[1] - ext[1]) // self.stride_w + 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 3 and x.shape[0] == 1:
            x = x[0]
        if x.ndim != 2:
            raise ShapeError(f"Fold takes a 2-D (c*kernel_h*kernel_w, blocks) blob, got shape {bottoms[0].shape}")
        taps = self.kernel_h * self.kernel_w
        blocks = self.blocks_hw[0] * self.blocks_hw[1]
        if x.shape[0] % taps or x.shape[1] != blocks:
            raise ShapeError(f"Fold input {x.shape}: expected (c*{taps}, {blocks}) for a {self.kernel_h}x"
                             f"{self.kernel_w} kernel sliding {self.blocks_hw[0]}x{self.blocks_hw[1]} times "
                             f"over the padded {self.padded_hw[0]}x{self.padded_hw[1]} output")
        # output_w/h and a large stride make few columns fill a large plane
        check_alloc(opt, (x.shape[0] // taps, *self.padded_hw), 4, "the padded output")
        out = fold.fold(x, x.shape[0] // taps, self.padded_hw, (self.kernel_h, self.kernel_w),
                        (self.stride_h, self.stride_w), (self.dilation_h, self.dilation_w), self.blocks_hw)
        h, w = self.padded_hw
        return [np.ascontiguousarray(out[:, self.pad_top:h - self.pad_bottom, self.pad_left:w - self.pad_right])]
