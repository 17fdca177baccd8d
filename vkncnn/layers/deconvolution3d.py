"""Deconvolution3D (transposed volumetric convolution):
y = activation(depad(deconv3d(x, weight) + bias)).

Each input voxel scatters `weight[:, c] * x[c, z, y, x]` onto the output window at
(z, y, x) * stride; each full output extent is (in - 1) * stride + kernel_extent +
output_pad (18 right, 19 bottom, 20 behind). The pads are then cut away: explicit
pads when any is positive, otherwise output_w/h/d (25/26/27) with a SAME pad mode
(-233 upper, -234 lower) crop to that size. Weights
`[num_output][num_input][kd][kh][kw]` are prepared at load as one matrix: a forward
is one matrix product plus one strided add per kernel tap (cpu_fallback/conv3d.py).
DeconvolutionDepthWise3D subclasses this with `group`. Runs on numpy in GPU nets too.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv3d
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_elements
from .common.window3d import as_volume, check_window3d_params, kernel3d, load_window3d_params, pads3d


@register_layer("Deconvolution3D")
class Deconvolution3D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.group = 1

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window3d_params(self, pd)
        self.output_pad_right = pd.get(18, 0)
        self.output_pad_bottom = pd.get(19, self.output_pad_right)
        self.output_pad_behind = pd.get(20, self.output_pad_right)
        self.output_w = pd.get(25, 0)
        self.output_h = pd.get(26, self.output_w)
        self.output_d = pd.get(27, self.output_w)
        self.bias_term = pd.get(5, 0)
        self.weight_data_size = pd.get(6, 0)
        self.group = self._load_group(pd)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        check_window3d_params(self)
        if min(self.output_pad_right, self.output_pad_bottom, self.output_pad_behind) < 0:
            raise ParamError("output_pad_right/bottom/behind (18/19/20) must not be negative")
        return 0

    def _load_group(self, pd) -> int:
        return 1

    def load_model(self, mb) -> int:
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("int8 weights, but this layer has no int8 inference")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        kernel = kernel3d(self)[0]
        taps = int(np.prod(kernel))
        self.num_input_g = self.weight_data_size // (self.num_output * taps)
        if self.num_input_g * self.num_output * taps != self.weight_data_size:
            raise ParamError(f"weight_data_size (6) {self.weight_data_size} is not "
                             f"num_output {self.num_output} x {taps} taps x whole input channels")
        self.weight_mat = conv3d.prepare_deconv3d_weight(weight, self.num_output, self.group, kernel)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = as_volume(bottoms[0], self.type)
        if x.shape[0] != self.num_input_g * self.group:
            raise ShapeError(f"input has {x.shape[0]} channels but the weights expect "
                             f"{self.num_input_g * self.group} ({self.num_input_g} per group x {self.group} groups)")
        if min(x.shape[1:]) == 0:
            raise ShapeError(f"Deconvolution3D: input {x.shape} is empty, there is nothing to convolve")
        kernel, stride, dilation = kernel3d(self)
        output_pad = (self.output_pad_behind, self.output_pad_bottom, self.output_pad_right)
        full = [(n - 1) * s + conv3d.kernel_extent(k, d) + p
                for n, k, s, d, p in zip(x.shape[1:], kernel, stride, dilation, output_pad)]
        check_elements(self.num_output * max(int(np.prod(full)), int(np.prod(kernel)) * x[0].size),
                       "the transposed convolution's output")
        # deconv3d's full output (stride, dilation, output pads: params) and per-tap products
        check_alloc(opt, (self.num_output, *full), 4, "the output before the cut")
        check_alloc(opt, (self.num_output * int(np.prod(kernel)), x[0].size), 4, "the per-tap products")
        out = conv3d.deconv3d(x, self.weight_mat, kernel, stride, dilation, output_pad, self.bias_data)
        out = fused_activation(out, self.activation_type, self.activation_params)
        wanted = (self.output_d, self.output_h, self.output_w)
        cut = conv3d.deconv_cut3d(out, pads3d(self), wanted)
        if cut is None:
            raise ShapeError(f"cannot cut the {out.shape[1:]} output to pads {pads3d(self)} / output "
                             f"size {wanted} (d, h, w): output_w/h/d need pad -233 or -234 and must not exceed "
                             "the full output (ncnn gives no result or garbage)")
        return [np.ascontiguousarray(cut)]
