"""Deconvolution1D (transposed 1-D convolution) over (channels, length), as pnnx writes for
ConvTranspose1d: y = activation(depad(deconv1d(x, weight) + bias)).

The full output length is (w - 1) * stride + kernel_extent + output_pad_right (18);
pads are then cut: explicit pad_left/right (4/15) when any is positive, otherwise
output_w (20) with pad -233 (SAME_UPPER) or -234 (SAME_LOWER) crops to that length.
Weights `[num_output][num_input][kernel_w]` (per group for the DepthWise subclass,
group 7) are prepared at load as one matrix; the forward is conv.py's transposed
kernel on one-row planes. dynamic_weight (28) takes weight (num_input,
num_output/group, kernel_w), PyTorch's ConvTranspose1d layout, and bias from inputs
1 and 2, and runs on numpy; static weights run on the GPU as Deconvolution with kernel_h 1.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.ops.convolution import (
    ConvGeometry,
    check_weight_storage,
    conv_path,
    record_conv,
    sequence_input_planes,
    upload_conv_weights,
)
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_elements
from .common.window1d import (
    as_sequence,
    check_dynamic_inputs,
    check_groups,
    check_window1d_params,
    dynamic_bias,
    load_window1d_params,
)


@register_layer("Deconvolution1D")
class Deconvolution1D(Layer):
    group_param = None  # param id of `group`; the DepthWise subclass reads 7

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        load_window1d_params(self, pd, group_id=self.group_param)
        self.output_pad_right = pd.get(18, 0)
        self.output_w = pd.get(20, 0)
        self.dynamic_weight = pd.get(28, 0)
        self.one_blob_only = not self.dynamic_weight
        check_window1d_params(self)
        if self.output_pad_right < 0:
            raise ParamError(f"output_pad_right (18) must not be negative, got {self.output_pad_right}")
        self.support_vulkan = not self.dynamic_weight  # weights that arrive as blobs run on numpy
        return 0

    def load_model(self, mb) -> int:
        if self.dynamic_weight:
            return 0
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("int8 weights, but this layer has no int8 inference")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        self.num_input_g = self.weight_data_size // (self.num_output * self.kernel_w)
        if self.num_input_g * self.num_output * self.kernel_w != self.weight_data_size:
            raise ParamError(f"weight_data_size (6) {self.weight_data_size} is not num_output x kernel_w x "
                             "whole input channels")
        self.weight_mat = conv.prepare_deconv_weight(weight, self.num_output, self.group, (1, self.kernel_w))
        return 0

    def forward_cpu(self, bottoms, opt):
        if self.dynamic_weight:
            wmat, kernel_w, bias, inc_g = self._dynamic_weights(bottoms)
        else:
            wmat, kernel_w, bias, inc_g = self.weight_mat, self.kernel_w, self.bias_data, self.num_input_g
        x = as_sequence(bottoms[0], self.type)
        check_groups(x.shape[0], inc_g, self.group)
        if x.shape[1] == 0:
            raise ShapeError(f"Deconvolution1D: input {x.shape} is empty, there is nothing to convolve")
        full = (x.shape[1] - 1) * self.stride_w + conv.kernel_extent(kernel_w, self.dilation_w) + self.output_pad_right
        check_elements(wmat.shape[0] * wmat.shape[1] // kernel_w * max(full, kernel_w * x.shape[1]),
                       "the transposed convolution's output")
        # conv.deconv2d's full output (stride, dilation, output pad: params) and per-tap products
        outc = wmat.shape[0] * wmat.shape[1] // kernel_w
        check_alloc(opt, (outc, full), 4, "the output before the cut")
        check_alloc(opt, (outc * kernel_w, x.shape[1]), 4, "the per-tap products")
        out = conv.deconv2d(x[:, None, :], wmat, (1, kernel_w), (1, self.stride_w), (1, self.dilation_w),
                            (0, self.output_pad_right), bias)
        out = fused_activation(out, self.activation_type, self.activation_params)
        start, length = self._kept_span(out.shape[2])
        return [np.ascontiguousarray(out[:, 0, start:start + length])]

    def _kept_span(self, full: int) -> tuple[int, int]:
        """(start, length) of the full output that ncnn keeps after cutting its pads: explicit
        pads when any is positive, else output_w centred by the SAME mode (conv.deconv_cut's
        rule on one row). Arithmetic, not a slice of an index array, because the GPU path asks
        before any output exists and a huge stride must not allocate a huge index row."""
        left, right = self.pad_left, self.pad_right
        if left > 0 or right > 0:
            ok = left >= 0 and right >= 0
        elif self.output_w > 0:
            wcut = full - self.output_w
            upper, lower = conv.SAME_UPPER in (left, right), conv.SAME_LOWER in (left, right)
            half = wcut // 2
            left, right = (half, wcut - half) if upper else (wcut - half, half)  # UPPER: odd one right
            ok = (upper or lower) and wcut >= 0
        else:
            return 0, full
        if not ok or left + right >= full:
            raise ShapeError(f"cannot cut the length-{full} output to pads {(self.pad_left, self.pad_right)} / "
                             f"output_w {self.output_w}: output_w needs pad -233 or -234 and must not exceed "
                             "the full output (ncnn gives no result or garbage)")
        return left, full - left - right

    def _dynamic_weights(self, bottoms):
        check_dynamic_inputs(bottoms, self.bias_term)
        weight = np.asarray(bottoms[1], np.float32)
        if weight.ndim != 3:
            raise ShapeError(f"dynamic deconvolution weight must be 3-D (num_input, num_output/group, kernel_w), "
                             f"got {weight.shape}")
        inc, outc_g, kernel_w = weight.shape
        if inc % self.group:
            raise ShapeError(f"dynamic weight {weight.shape}: {inc} input channels not divisible by group "
                             f"{self.group}")
        inc_g, outc = inc // self.group, outc_g * self.group
        # (g, inc_g, outc_g, k) -> the static layout (g, outc_g, inc_g, k)
        static = weight.reshape(self.group, inc_g, outc_g, kernel_w).transpose(0, 2, 1, 3)
        wmat = conv.prepare_deconv_weight(static, outc, self.group, (1, kernel_w))
        return wmat, kernel_w, dynamic_bias(bottoms, self.bias_term, outc), inc_g

    # -- GPU -----------------------------------------------------------------------------------
    # A sequence is a one-row image: the (channels, length) tensor read as `channels` planes of
    # 1 x length goes through the 2-D transposed convolution with kernel_h = 1 (the shaders
    # gather per output pixel, so the cut is an offset into the full output, as for
    # Deconvolution).
    @property
    def _gpu_path(self) -> str:
        return conv_path(self.num_input_g, self.num_output // self.group, self.group)

    def upload_model(self, cmd, opt) -> int:
        """weight_mat is (g, outc_g*kw, inc_g): [g][oc][tap][ic] as the matrix product reads
        it; [tap][c] depthwise; [oc][ic][tap] for small groups."""
        self.weight_gpu, self.bias_gpu = upload_conv_weights(
            self, cmd, opt, self._gpu_path, self.kernel_w, taps_first=True)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        check_weight_storage(self, bottoms[0])
        x, plane = sequence_input_planes(bottoms[0], self.type or "Deconvolution1D")
        if plane.w == 0:  # as Deconvolution: no position, no transposed convolution
            raise ShapeError(f"{self.type or 'Deconvolution1D'}: input {bottoms[0].numpy_shape()} is empty, "
                             "there is nothing to convolve")
        check_groups(plane.channels, self.num_input_g, self.group)
        full = (plane.w - 1) * self.stride_w + conv.kernel_extent(self.kernel_w, self.dilation_w) + \
            self.output_pad_right
        start, length = self._kept_span(full)
        check_elements(self.num_output * length, "the transposed convolution's output")
        check_alloc(opt, (self.num_output, length), bottoms[0].scalar_size(), "the output")
        # the shaders gather per output position: the cut is just where output 0 sits in the full row
        geometry = ConvGeometry(self.kernel_w, 1, self.dilation_w, 1, self.stride_w, 1, 0, start)
        return [record_conv(self, cmd, opt, x, plane, (self.num_output, length), geometry, self._gpu_path,
                            deconv=True)]
