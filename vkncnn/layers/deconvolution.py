"""Deconvolution (transposed convolution): y = activation(depad(deconv2d(x, weight) + bias)).

Each input pixel scatters `weight[:, c] * x[c, i, j]` onto the output window at
(i*stride, j*stride); the full output is (in-1)*stride + kernel_extent + output_pad.
The pads are then cut away ("depad"): explicit pads when any is positive, otherwise
`output_w/output_h` with a SAME pad mode (-233 upper, -234 lower) crops to that size.

Weights are `[num_output][num_input][kernel_h][kernel_w]` (ncnn's layout, checked
against ncnn), prepared at load as one matrix (num_output*kh*kw, num_input): a forward
is one matrix product plus one strided add per kernel tap. `dynamic_weight` (28)
takes weight and bias from input blobs 1 and 2; a dynamic weight blob is
(num_input, num_output/group, kh, kw) like PyTorch's ConvTranspose2d weight.
DeconvolutionDepthWise subclasses this with `group`.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.ops.convolution import (
    ConvGeometry,
    check_weight_storage,
    conv_input_planes,
    conv_path,
    record_conv,
    upload_conv_weights,
)
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .convolution import check_weight_size, check_window_params, load_window_params


@register_layer("Deconvolution")
class Deconvolution(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.group = 1

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window_params(self, pd)
        self.output_pad_right = pd.get(18, 0)
        self.output_pad_bottom = pd.get(19, self.output_pad_right)
        self.output_w = pd.get(20, 0)
        self.output_h = pd.get(21, self.output_w)
        self.bias_term = pd.get(5, 0)
        self.weight_data_size = pd.get(6, 0)
        self.group = self._load_group(pd)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        self.dynamic_weight = pd.get(28, 0)
        if self.dynamic_weight:
            self.one_blob_only = False
        self._check_params()
        self.support_vulkan = not self.dynamic_weight  # weights that arrive as blobs run on numpy
        return 0

    def _load_group(self, pd) -> int:
        return 1

    def _check_params(self) -> None:
        check_window_params(self)
        if self.output_pad_right < 0 or self.output_pad_bottom < 0:
            raise ParamError("output_pad_right/bottom (18/19) must not be negative")
        check_weight_size(self)

    def load_model(self, mb) -> int:
        if self.dynamic_weight:
            return 0
        weight = mb.load(self.weight_data_size, 0)
        if weight.dtype == np.int8:
            raise WeightError("Deconvolution has no int8 inference: its weights must be fp32 or fp16")
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        self.num_input_g = self.weight_data_size // (self.num_output * self.kernel_w * self.kernel_h)
        self.weight_mat = conv.prepare_deconv_weight(weight, self.num_output, self.group,
                                                     (self.kernel_h, self.kernel_w))
        return 0

    # -- forward -------------------------------------------------------------------------------
    def forward_cpu(self, bottoms, opt):
        if self.dynamic_weight:
            x, wmat, kernel, bias, inc_g = self._dynamic_inputs(bottoms)
        else:
            x, wmat, kernel, bias, inc_g = bottoms[0], self.weight_mat, (self.kernel_h, self.kernel_w), \
                self.bias_data, self.num_input_g
        x = self._as_planes(x)
        if x.shape[0] != inc_g * self.group:
            raise ShapeError(f"input has {x.shape[0]} channels but the weights expect "
                             f"{inc_g * self.group} ({inc_g} per group x {self.group} groups)")
        if x.shape[1] == 0 or x.shape[2] == 0:
            raise ShapeError(f"Deconvolution: input {x.shape} is empty, there is nothing to convolve")
        self._check_budget(opt, x.shape, wmat, kernel)
        out = conv.deconv2d(x.astype(np.float32, copy=False), wmat, kernel,
                            (self.stride_h, self.stride_w), (self.dilation_h, self.dilation_w),
                            (self.output_pad_bottom, self.output_pad_right), bias)
        out = fused_activation(out, self.activation_type, self.activation_params)
        pads = (self.pad_left, self.pad_right, self.pad_top, self.pad_bottom)
        cut = conv.deconv_cut(out, pads, (self.output_h, self.output_w))
        if cut is None:
            raise ShapeError(f"cannot cut the {out.shape[1]}x{out.shape[2]} output to pads {pads} / output "
                             f"size {self.output_h}x{self.output_w}: output_w/h need pad -233 or -234 and "
                             "must not exceed the full output (ncnn gives no result or garbage)")
        return [np.ascontiguousarray(cut)]

    def _full_hw(self, h: int, w: int, kernel) -> tuple[int, int]:
        """The output before the cut: (in - 1) * stride + kernel extent + output pad."""
        return ((h - 1) * self.stride_h + conv.kernel_extent(kernel[0], self.dilation_h) + self.output_pad_bottom,
                (w - 1) * self.stride_w + conv.kernel_extent(kernel[1], self.dilation_w) + self.output_pad_right)

    def _check_budget(self, opt, shape: tuple, wmat: np.ndarray, kernel) -> None:
        """conv.deconv2d's buffers: the full output (stride, dilation and output pads come from
        params) and, unless a group has one input channel, the product of every tap."""
        groups, rows_g, inc_g = wmat.shape
        taps = kernel[0] * kernel[1]
        outc = groups * (rows_g // taps)
        check_alloc(opt, (outc, *self._full_hw(shape[1], shape[2], kernel)), 4, "the output before the cut")
        if not (inc_g == 1 and taps > 1):
            check_alloc(opt, (outc * taps, shape[1] * shape[2]), 4, "the per-tap products")

    def _as_planes(self, x: np.ndarray) -> np.ndarray:
        if x.ndim == 1:
            return x.reshape(1, 1, -1)
        if x.ndim == 2:
            return x[None]
        if x.ndim == 4:
            # ncnn reads uninitialised memory for any 4-D input here
            raise ShapeError(f"{self.type or 'Deconvolution'} takes (c, h, w) input; got 4-D {x.shape} "
                             "(use Deconvolution3D, or Reshape to 3-D)")
        return x

    def _dynamic_inputs(self, bottoms):
        need = 3 if self.bias_term else 2
        if len(bottoms) < need:
            raise ShapeError(f"dynamic_weight needs {need} inputs (x, weight{', bias' if self.bias_term else ''}), "
                             f"got {len(bottoms)}")
        weight = np.asarray(bottoms[1], np.float32)
        if weight.ndim != 4:
            raise ShapeError(f"dynamic deconvolution weight must be 4-D (inc, outc/group, kh, kw), "
                             f"got {weight.shape}")
        inc, outc_g, kh, kw = weight.shape
        if weight.size == 0:
            raise ShapeError(f"dynamic deconvolution weight {weight.shape} is empty")
        if inc % self.group:
            raise ShapeError(f"dynamic weight {weight.shape}: {inc} input channels not divisible "
                             f"by group {self.group}")
        inc_g, outc = inc // self.group, outc_g * self.group
        # (g, inc_g, outc_g, kh, kw) -> ncnn's static layout (g, outc_g, inc_g, kh, kw)
        static = weight.reshape(self.group, inc_g, outc_g, kh, kw).transpose(0, 2, 1, 3, 4)
        wmat = conv.prepare_deconv_weight(static, outc, self.group, (kh, kw))
        bias = None
        if self.bias_term:
            bias = np.asarray(bottoms[2], np.float32).ravel()
            if bias.size != outc:
                raise ShapeError(f"dynamic bias has {bias.size} values, expected {outc}")
        return bottoms[0], wmat, (kh, kw), bias, inc_g

    # -- GPU -----------------------------------------------------------------------------------
    # The shaders gather instead of scattering (convolution.comp / convolutiondepthwise.comp
    # with DECONV=1): each output pixel sums the input pixels whose kernel window covers it,
    # so no two invocations write the same place, and the cut is just an offset.
    @property
    def _gpu_path(self) -> str:
        return conv_path(self.num_input_g, self.num_output // self.group, self.group)

    def upload_model(self, cmd, opt) -> int:
        """weight_mat is (g, outc_g*kh*kw, inc_g): already [g][oc][tap][ic] for the matrix
        product; [tap][c] depthwise; [oc][ic][tap] for small groups."""
        self.weight_gpu, self.bias_gpu = upload_conv_weights(
            self, cmd, opt, self._gpu_path, self.kernel_h * self.kernel_w, taps_first=True)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        check_weight_storage(self, x)
        if x.dims == 4:
            raise ShapeError(f"{self.type or 'Deconvolution'} takes (c, h, w) input; got 4-D "
                             f"{x.numpy_shape()} (use Deconvolution3D, or Reshape to 3-D)")
        x, plane = conv_input_planes(x, cmd, opt, False, self.type or "Deconvolution")
        if plane.h == 0 or plane.w == 0:  # as the numpy path: no pixel, no transposed convolution
            raise ShapeError(f"{self.type or 'Deconvolution'}: input {bottoms[0].numpy_shape()} is empty, "
                             "there is nothing to convolve")
        if plane.channels != self.num_input_g * self.group:
            raise ShapeError(f"input has {plane.channels} channels but the weights expect "
                             f"{self.num_input_g * self.group} ({self.num_input_g} per group x {self.group} groups)")
        full_h, full_w = self._full_hw(plane.h, plane.w, (self.kernel_h, self.kernel_w))
        pads = (self.pad_left, self.pad_right, self.pad_top, self.pad_bottom)
        box = conv.cut_box(full_h, full_w, pads, (self.output_h, self.output_w))
        if box is None:
            raise ShapeError(f"cannot cut the {full_h}x{full_w} output to pads {pads} / output "
                             f"size {self.output_h}x{self.output_w}: output_w/h need pad -233 or -234 and "
                             "must not exceed the full output (ncnn gives no result or garbage)")
        top, left, out_h, out_w = box
        # the shaders gather per output pixel: only the cut output is ever allocated
        check_alloc(opt, (self.num_output, out_h, out_w), x.scalar_size(), "the output")
        geometry = ConvGeometry(self.kernel_w, self.kernel_h, self.dilation_w, self.dilation_h, self.stride_w,
                                self.stride_h, top, left)
        shape = (self.num_output, out_h, out_w)
        return [record_conv(self, cmd, opt, x, plane, shape, geometry, self._gpu_path, deconv=True)]
