"""ConvolutionDepthWise1D: grouped 1-D convolution over (channels, length),
y = activation(conv1d_groups(pad(x), weight) + bias), as pnnx writes for Conv1d(groups > 1).

Weights `[group][num_output/group][num_input/group][kernel_w]` are laid out at load as
one matrix per group; the forward is conv.py's 2-D kernel on one-row planes (one
multiply-add per tap when each group has one input channel, else one batched matrix
product). The input's channels size the groups, as in ncnn: a weight blob longer than
they need is read from its head. Pads 4/15 explicit or both -233/-234 (SAME), pad_value 18. dynamic_weight
(19) takes weight (num_output, num_input/group, kernel_w) and bias from inputs 1 and 2,
and runs on numpy; static weights run on the GPU as ConvolutionDepthWise with kernel_h 1.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ShapeError, WeightError
from vkncnn.gpu.ops.convolution import (
    ConvGeometry,
    check_weight_storage,
    conv_path,
    record_conv,
    sequence_input_planes,
    upload_conv_weights,
)
from vkncnn.gpu.vulkan.device_limits import KernelUnsupported
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_elements
from .common.window1d import (
    as_sequence,
    check_conv1d_budget,
    check_dynamic_inputs,
    check_groups,
    check_window1d_params,
    conv1d_pads,
    dynamic_bias,
    load_window1d_params,
)


@register_layer("ConvolutionDepthWise1D")
class ConvolutionDepthWise1D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        load_window1d_params(self, pd, group_id=7)
        self.pad_value = pd.get(18, 0.0)
        self.dynamic_weight = pd.get(19, 0)
        self.one_blob_only = not self.dynamic_weight
        check_window1d_params(self)
        self.support_vulkan = not self.dynamic_weight  # weights that arrive as blobs run on numpy
        return 0

    def load_model(self, mb) -> int:
        if self.dynamic_weight:
            return 0
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("int8 weights, but this layer has no int8 inference")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        self.weight_data = np.asarray(weight, np.float32).reshape(-1)
        self.num_input_g = self.weight_data_size // (self.num_output * self.kernel_w)
        self.weight_mat = conv.prepare_conv_weight(weight, self.num_output, self.group, (1, self.kernel_w))
        return 0

    def _weights_for(self, channels: int) -> tuple:
        """(weight matrix, input channels per group) for an input of `channels`, sizing the
        groups from the input as ncnn does: it reads the first num_output * channels/group *
        kernel_w weights, so a longer weight blob (ncnn's own test sizes it with kernel_w
        squared) leaves its tail unread. Computed per input, never stored on the layer: one
        net may serve inputs of several sizes from several threads."""
        if channels == self.num_input_g * self.group or channels % self.group:
            return self.weight_mat, self.num_input_g  # the weights' own layout, or check_groups refuses
        inc_g = channels // self.group
        need = self.num_output * inc_g * self.kernel_w
        if need > self.weight_data.size:
            raise ShapeError(f"input has {channels} channels (rows): {self.group} groups of {inc_g} need "
                             f"{need} weights, the layer holds {self.weight_data.size}")
        wmat = conv.prepare_conv_weight(self.weight_data[:need], self.num_output, self.group, (1, self.kernel_w))
        return wmat, inc_g

    def forward_cpu(self, bottoms, opt):
        x = as_sequence(bottoms[0], self.type)
        if self.dynamic_weight:
            wmat, kernel_w, bias, inc_g = self._dynamic_weights(bottoms)
        else:
            wmat, inc_g = self._weights_for(x.shape[0])
            kernel_w, bias = self.kernel_w, self.bias_data
        check_groups(x.shape[0], inc_g, self.group)
        left, right = conv1d_pads(x.shape[1], kernel_w, self.stride_w, self.dilation_w, self.pad_left, self.pad_right)
        check_elements(x.shape[0] * (x.shape[1] + left + right) * max(1, kernel_w), "the padded input")
        check_conv1d_budget(opt, x.shape[0], x.shape[1] + left + right, wmat, kernel_w, self.stride_w,
                            self.dilation_w)
        xp = conv.pad_planes(x[:, None, :], 0, 0, left, right, self.pad_value)
        extent = conv.kernel_extent(kernel_w, self.dilation_w)
        if xp.shape[2] < extent:
            raise ShapeError(f"input length {x.shape[1]} (padded {xp.shape[2]}) is shorter than the "
                             f"kernel extent {extent}")
        out = conv.conv2d(xp, wmat, (1, kernel_w), (1, self.stride_w), (1, self.dilation_w), bias)
        return [fused_activation(out[:, 0, :], self.activation_type, self.activation_params)]

    def _dynamic_weights(self, bottoms):
        """Weight blob (num_output, num_input/group, kernel_w), PyTorch's Conv1d layout."""
        check_dynamic_inputs(bottoms, self.bias_term)
        weight = np.asarray(bottoms[1], np.float32)
        if weight.ndim not in (2, 3):
            raise ShapeError(f"dynamic weight must be (num_output, num_input/group, kernel_w), got {weight.shape}")
        outc = weight.shape[0] if weight.ndim == 3 else 1
        kernel_w = weight.shape[-1]
        if outc % self.group:
            raise ShapeError(f"dynamic weight {weight.shape}: {outc} outputs not divisible by group {self.group}")
        inc_g = weight.size // (outc * kernel_w)
        wmat = conv.prepare_conv_weight(weight, outc, self.group, (1, kernel_w))
        return wmat, kernel_w, dynamic_bias(bottoms, self.bias_term, outc), inc_g

    # -- GPU -----------------------------------------------------------------------------------
    # A sequence is a one-row image: the (channels, length) tensor read as `channels` planes of
    # 1 x length goes through the 2-D grouped convolution with kernel_h = 1, so the shader is
    # picked exactly as for ConvolutionDepthWise (depthwise, small groups, matrix product).
    @property
    def _gpu_path(self) -> str:
        return conv_path(self.num_input_g, self.num_output // self.group, self.group)

    def upload_model(self, cmd, opt) -> int:
        """weight_mat is (g, outc_g, inc_g*kw): [tap][channel] for the depthwise shader,
        [oc][ic][tap] as it is for small groups, [g][oc][tap][ic] for the matrix product."""
        self.weight_gpu, self.bias_gpu = upload_conv_weights(
            self, cmd, opt, self._gpu_path, self.kernel_w, taps_first=False)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        check_weight_storage(self, bottoms[0])
        x, plane = sequence_input_planes(bottoms[0], self.type or "ConvolutionDepthWise1D")
        if plane.channels % self.group == 0 and plane.channels != self.num_input_g * self.group:
            # weights uploaded for another channel count: the numpy path reads the blob's head
            raise KernelUnsupported(f"{self.type} {self.name!r}: its weights were laid out for "
                                    f"{self.num_input_g * self.group} input channels, the input has "
                                    f"{plane.channels}")
        check_groups(plane.channels, self.num_input_g, self.group)
        left, right = conv1d_pads(plane.w, self.kernel_w, self.stride_w, self.dilation_w, self.pad_left,
                                  self.pad_right)
        extent = conv.kernel_extent(self.kernel_w, self.dilation_w)
        padded = plane.w + left + right
        if padded < extent:
            raise ShapeError(f"input length {plane.w} (padded {padded}) is shorter than the kernel extent {extent}")
        outw = (padded - extent) // self.stride_w + 1
        check_elements(self.num_output * outw, "the output")  # absurd pads, before the GPU allocates
        check_alloc(opt, (self.num_output, outw), x.scalar_size(), "the output")
        # the shaders read outside the row as pad_value: only the leading pad is an offset
        geometry = ConvGeometry(self.kernel_w, 1, self.dilation_w, 1, self.stride_w, 1, 0, left, self.pad_value)
        return [record_conv(self, cmd, opt, x, plane, (self.num_output, outw), geometry, self._gpu_path,
                            deconv=False)]
