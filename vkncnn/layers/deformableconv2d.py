"""DeformableConv2D (torchvision deform_conv2d, DCNv1/v2):
y = activation(deformable_conv(x, offset, mask, weight) + bias).

Inputs: x (c, h, w); offset (2*kernel_h*kernel_w*G, out_h, out_w), channel pairs
(dy, dx) per kernel tap, G offset groups; optional mask (kernel_h*kernel_w*G, out_h,
out_w) (DCNv2). The output size is the plain convolution's over the explicitly padded
input (pads 4 left, 15 right, 14 top, 16 bottom; no SAME mode). Weights
`[num_output][num_input][kernel_h][kernel_w]`, as Convolution: one bilinear gather of
all taps (cpu_fallback/deformable.py) and one matrix product. Runs on numpy in GPU nets.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.cpu_fallback.deformable import deformable_columns
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .convolution import check_weight_size, check_window_params, load_window_params


@register_layer("DeformableConv2D")
class DeformableConv2D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.group = 1
        self.dynamic_weight = 0

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window_params(self, pd)
        self.bias_term = pd.get(5, 0)
        self.weight_data_size = pd.get(6, 0)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        check_window_params(self)
        check_weight_size(self)
        if min(self.pad_left, self.pad_right, self.pad_top, self.pad_bottom) < 0:
            raise ParamError("DeformableConv2D pads (4/15/14/16) must not be negative (no SAME mode)")
        return 0

    def load_model(self, mb) -> int:
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("DeformableConv2D has no int8 inference: its weights must be fp32 or fp16")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        self.num_input = self.weight_data_size // (self.num_output * self.kernel_h * self.kernel_w)
        self.weight_mat = np.ascontiguousarray(np.asarray(weight, np.float32).reshape(self.num_output, -1))
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) not in (2, 3):
            raise ShapeError(f"DeformableConv2D takes x, offset and an optional mask, got {len(bottoms)} inputs")
        x = bottoms[0]
        if x.ndim == 2:
            x = x[None]
        if x.ndim != 3:
            raise ShapeError(f"DeformableConv2D takes a (c, h, w) input, got shape {x.shape}")
        if x.shape[0] != self.num_input:
            raise ShapeError(f"input has {x.shape[0]} channels but the weights expect {self.num_input}")
        kernel = (self.kernel_h, self.kernel_w)
        taps = self.kernel_h * self.kernel_w
        ext_h, ext_w = conv.kernel_extent(self.kernel_h, self.dilation_h), conv.kernel_extent(self.kernel_w,
                                                                                               self.dilation_w)
        out_h = (x.shape[1] + self.pad_top + self.pad_bottom - ext_h) // self.stride_h + 1
        out_w = (x.shape[2] + self.pad_left + self.pad_right - ext_w) // self.stride_w + 1
        if out_h <= 0 or out_w <= 0:
            raise ShapeError(f"input {x.shape[1]}x{x.shape[2]} with pads is smaller than the kernel extent "
                             f"{ext_h}x{ext_w}")
        offset = self._plane_input(bottoms[1], "offset", 2 * taps, (out_h, out_w))
        groups = offset.shape[0] // (2 * taps)
        if x.shape[0] % groups:
            raise ShapeError(f"offset has {groups} groups of {2 * taps} channels, which do not divide the "
                             f"{x.shape[0]} input channels")
        mask = None
        if len(bottoms) == 3:
            mask = self._plane_input(bottoms[2], "mask", taps, (out_h, out_w))
            if mask.shape[0] != groups * taps:
                raise ShapeError(f"mask has {mask.shape[0]} channels, expected {groups * taps} "
                                 f"({groups} offset groups x {taps} taps)")
        check_alloc(opt, (x.shape[0] * taps, out_h * out_w), 4, "the sampled columns")
        check_alloc(opt, (self.num_output, out_h, out_w), 4, "the output")
        cols = deformable_columns(x.astype(np.float32, copy=False), offset, mask, kernel,
                                  (self.stride_h, self.stride_w), (self.dilation_h, self.dilation_w),
                                  (self.pad_top, self.pad_left), (out_h, out_w))
        out = (self.weight_mat @ cols).reshape(self.num_output, out_h, out_w)
        if self.bias_data is not None:
            out += self.bias_data[:, None, None]
        return [fused_activation(out, self.activation_type, self.activation_params)]

    @staticmethod
    def _plane_input(blob: np.ndarray, name: str, per_group: int, out_hw) -> np.ndarray:
        blob = np.asarray(blob, np.float32)
        if blob.ndim == 2:
            blob = blob[None]
        if blob.ndim != 3 or blob.shape[1:] != tuple(out_hw) or blob.shape[0] == 0 or blob.shape[0] % per_group:
            raise ShapeError(f"{name} must be (G*{per_group}, {out_hw[0]}, {out_hw[1]}) for this output, "
                             f"got {blob.shape}")
        return blob
