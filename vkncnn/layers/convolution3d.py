"""Convolution3D: y = activation(conv3d(pad(x), weight) + bias) over (c, d, h, w) volumes.

Weights `[num_output][num_input][kernel_d][kernel_h][kernel_w]` become one matrix at
load; a forward is one padding, one strided im2col and one matrix product
(cpu_fallback/conv3d.py). Input is 4-D; a 3-D blob is read as one slice deep, a 2-D blob
as one channel, exactly as the same data given 4-D (ncnn itself computes garbage for a
padded 3-D blob). Pads: explicit, all -233 (SAME_UPPER) or all -234
(SAME_LOWER), filled with pad_value (18). ConvolutionDepthWise3D subclasses this
with `group`. Runs on numpy in GPU nets too (no shader).
"""

from __future__ import annotations

import math

import numpy as np

from vkncnn.cpu_fallback import conv3d
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.layer import Layer, register_layer

from .common.alloc_limit import check_elements, check_window
from .common.window3d import as_volume, check_window3d_params, kernel3d, load_window3d_params, pads3d


@register_layer("Convolution3D")
class Convolution3D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.group = 1

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window3d_params(self, pd)
        self.pad_value = pd.get(18, 0.0)
        self.bias_term = pd.get(5, 0)
        self.weight_data_size = pd.get(6, 0)
        self.group = self._load_group(pd)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        check_window3d_params(self)
        return 0

    def _load_group(self, pd) -> int:
        return 1

    def load_model(self, mb) -> int:
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("int8 weights, but this layer has no int8 inference")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        taps = self.kernel_d * self.kernel_h * self.kernel_w
        self.num_input_g = self.weight_data_size // (self.num_output * taps)
        if self.num_input_g * self.group * taps * (self.num_output // self.group) != self.weight_data_size:
            raise ParamError(f"weight_data_size (6) {self.weight_data_size} does not split into "
                             f"{self.group} groups of {self.num_output // self.group} outputs x {taps} taps")
        self.weight_mat = conv3d.prepare_conv3d_weight(weight, self.num_output, self.group)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = as_volume(bottoms[0], self.type)
        if x.shape[0] != self.num_input_g * self.group:
            raise ShapeError(f"input has {x.shape[0]} channels but the weights expect "
                             f"{self.num_input_g * self.group} ({self.num_input_g} per group x {self.group} groups)")
        kernel, stride, dilation = kernel3d(self)
        pads = conv3d.same_or_explicit_pads(x.shape[1:], kernel, stride, dilation, pads3d(self))
        if pads is None:
            raise ParamError(f"pads {pads3d(self)} mix explicit and negative values")
        padded = tuple(n + b + a for n, (b, a) in zip(x.shape[1:], pads))
        if min(padded) <= 0:
            raise ShapeError(f"input {x.shape[1:]} with pads {pads} leaves nothing to convolve")
        out_size = [conv3d.output_extent(n, k, s, d) for n, k, s, d in zip(padded, kernel, stride, dilation)]
        columns = x.shape[0] * math.prod(kernel) * math.prod(max(n, 0) for n in out_size)
        check_elements(x.shape[0] * math.prod(padded), "the padded input")
        check_elements(columns, "the im2col matrix")
        check_window(opt, (x.shape[0], *padded), (self.num_output, *out_size), columns)
        xp = conv3d.pad_volume(x.astype(np.float32, copy=False), pads, self.pad_value)
        extents = [conv3d.kernel_extent(k, d) for k, d in zip(kernel, dilation)]
        if any(n < e for n, e in zip(xp.shape[1:], extents)):
            raise ShapeError(f"input {x.shape[1:]} (padded {xp.shape[1:]}) is smaller than the "
                             f"kernel extent {tuple(extents)} (d, h, w)")
        out = conv3d.conv3d(xp, self.weight_mat, kernel, stride, dilation, self.bias_data)
        return [fused_activation(out, self.activation_type, self.activation_params)]
