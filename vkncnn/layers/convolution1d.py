"""Convolution1D: y = activation(conv1d(pad(x), weight) + bias) over a sequence.

Input is 2-D (h = channels, w = length); a 1-D input is one channel, a 3-D
(1, h, w) input is read as (h, w). Weights
`[num_output][num_input][kernel_w]` become one (num_output, num_input*kernel_w)
matrix at load; the forward is the 2-D im2col kernel with a kernel height of 1.
Pads: 4 pad_left, 15 pad_right (both -233 = SAME_UPPER, both -234 = SAME_LOWER),
18 pad_value. `dynamic_weight` (19) takes weight (num_output, num_input, kernel_w)
and bias from input blobs 1 and 2.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ShapeError, WeightError
from vkncnn.gpu.ops.convolution import ConvGeometry, Plane, check_weight_storage, record_conv, upload_conv_weights
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.window1d import check_conv1d_budget, check_window1d_params, load_window1d_params


@register_layer("Convolution1D")
class Convolution1D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        load_window1d_params(self, pd, group_id=None)
        self.pad_value = pd.get(18, 0.0)
        self.dynamic_weight = pd.get(19, 0)
        if self.dynamic_weight:
            self.one_blob_only = False
            self.support_vulkan = False  # weights that arrive as blobs run on numpy
        check_window1d_params(self)
        return 0

    def load_model(self, mb) -> int:
        if self.dynamic_weight:
            return 0
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("Convolution1D has no int8 inference: its weights must be fp32 or fp16")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        self.num_input = self.weight_data_size // (self.num_output * self.kernel_w)
        self.weight_mat = conv.prepare_conv_weight(weight, self.num_output, 1, (1, self.kernel_w))
        return 0

    def forward_cpu(self, bottoms, opt):
        if self.dynamic_weight:
            x, wmat, kernel_w, bias, num_input = self._dynamic_inputs(bottoms)
        else:
            x, wmat, kernel_w, bias, num_input = (bottoms[0], self.weight_mat, self.kernel_w,
                                                   self.bias_data, self.num_input)
        if x.ndim == 1:
            x = x[None]
        elif x.ndim == 3 and x.shape[0] == 1:
            x = x[0]   # (1, h, w) is the same memory as (h, w)
        if x.ndim != 2:
            raise ShapeError(f"Convolution1D takes (channels, length) input, got {x.ndim}-D {x.shape}")
        if x.shape[0] != num_input:
            raise ShapeError(f"input has {x.shape[0]} channels (rows) but the weights expect {num_input}")
        x = x.astype(np.float32, copy=False)[:, None, :]          # (c, 1, w)
        left, right = self._pads(x.shape[2], kernel_w)
        check_conv1d_budget(opt, x.shape[0], x.shape[2] + left + right, wmat, kernel_w, self.stride_w,
                            self.dilation_w)
        xp = conv.pad_planes(x, 0, 0, left, right, self.pad_value)
        extent = conv.kernel_extent(kernel_w, self.dilation_w)
        if xp.shape[2] < extent:
            raise ShapeError(f"input length {x.shape[2]} (padded {xp.shape[2]}) is shorter than the "
                             f"kernel extent {extent}")
        out = conv.conv2d(xp, wmat, (1, kernel_w), (1, self.stride_w), (1, self.dilation_w), bias)
        return [fused_activation(out[:, 0, :], self.activation_type, self.activation_params)]

    # -- GPU -----------------------------------------------------------------------------------
    # A sequence is a one-row image: the 2-D convolution shader with kernel_h = 1, reading
    # the (channels, length) tensor as `channels` planes of 1 x length.
    group = 1

    def upload_model(self, cmd, opt) -> int:
        """[outc][inc][kw] as the shader reads it: [outc][kw][inc]."""
        self.weight_gpu, self.bias_gpu = upload_conv_weights(self, cmd, opt, "gemm", self.kernel_w, taps_first=False)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        check_weight_storage(self, x)
        shape = x.numpy_shape()
        if x.dims == 1:
            plane = Plane(1, 1, shape[0], shape[0], 1)
        elif x.dims == 2 or (x.dims == 3 and shape[0] == 1):
            if x.dims == 3:
                plane = Plane(shape[1], 1, shape[2], shape[2], 1)   # (1, h, w) is (h, w)
            else:
                plane = Plane(shape[0], 1, shape[1], shape[1], x.elempack)
        else:
            raise ShapeError(f"Convolution1D takes (channels, length) input, got {x.dims}-D {shape}")
        if plane.channels != self.num_input:
            raise ShapeError(f"input has {plane.channels} channels (rows) but the weights expect {self.num_input}")
        left, right = self._pads(plane.w, self.kernel_w)
        extent = conv.kernel_extent(self.kernel_w, self.dilation_w)
        padded = plane.w + left + right
        if padded < extent:
            raise ShapeError(f"input length {plane.w} (padded {padded}) is shorter than the kernel extent {extent}")
        outw = (padded - extent) // self.stride_w + 1
        check_alloc(opt, (self.num_output, outw), x.scalar_size(), "the output")  # pads come from params
        geometry = ConvGeometry(self.kernel_w, 1, self.dilation_w, 1, self.stride_w, 1, 0, left, self.pad_value)
        return [record_conv(self, cmd, opt, x, plane, (self.num_output, outw), geometry, "gemm", deconv=False)]

    def _pads(self, length: int, kernel_w: int) -> tuple[int, int]:
        if self.pad_left > 0 or self.pad_right > 0:
            return self.pad_left, self.pad_right
        # SAME_UPPER / SAME_LOWER (both pads -233 / -234) as the 2-D rule on a 1-row plane
        _, _, left, right = conv.conv_padding(1, length, (1, kernel_w), (1, self.stride_w),
                                              (1, self.dilation_w), (self.pad_left, self.pad_right) * 2)
        return left, right

    def _dynamic_inputs(self, bottoms):
        need = 3 if self.bias_term else 2
        if len(bottoms) < need:
            raise ShapeError(f"dynamic_weight needs {need} inputs (x, weight{', bias' if self.bias_term else ''}), "
                             f"got {len(bottoms)}")
        weight = np.asarray(bottoms[1], np.float32)
        kernel_w = weight.shape[-1]
        outc = weight.shape[0] if weight.ndim >= 3 else 1
        num_input = weight.size // (outc * kernel_w)
        bias = None
        if self.bias_term:
            bias = np.asarray(bottoms[2], np.float32).ravel()
            if bias.size != outc:
                raise ShapeError(f"dynamic bias has {bias.size} values, expected {outc}")
        wmat = conv.prepare_conv_weight(weight, outc, 1, (1, kernel_w))
        return bottoms[0], wmat, kernel_w, bias, num_input
