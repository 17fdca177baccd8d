"""Convolution: y = activation(conv2d(pad(x), weight) + bias).

Input (c, h, w); a 2-D input is one channel, a 4-D input with depth 1 is its
(c, h, w) plane. A 1-D input with a 1x1 kernel is ncnn's legacy flattened path: it
runs as an InnerProduct over the whole vector and gives 1-D output.

Weights `[num_output][num_input][kernel_h][kernel_w]` are laid out once at load as
one matrix per group, so a forward is one padding, one im2col and one matrix product.
`dynamic_weight=1` takes weight (and bias) from extra input blobs instead.

int8 models (`int8_scale_term` != 0) load their scales. With
`opt.use_int8_inference` (ncnn's default) they compute as ncnn does: the input is
quantized with the bottom scale, products are summed exactly, the sum is scaled back
per output channel, then bias and activation; `int8_scale_term > 100` re-quantizes
the output with the top scale into an int8 array. With int8 inference off, the
dequantized weights run in fp32 (ncnn itself produces garbage there).
ConvolutionDepthWise subclasses this with `group`.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.cpu_fallback.conv_kernels import ConvKernel
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.ops import winograd_convolution as winograd
from vkncnn.gpu.ops.convolution import (
    ConvGeometry,
    check_weight_storage,
    conv_input_planes,
    conv_path,
    record_conv,
    residual_fits,
    upload_conv_weights,
)
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_window


def load_window_params(layer, pd) -> None:
    """Kernel, dilation, stride and pads (ids 1-4, 11-16), shared by the convolution family;
    an absent _h / right / bottom value repeats its _w / left / top partner, as in ncnn."""
    layer.kernel_w = pd.get(1, 0)
    layer.kernel_h = pd.get(11, layer.kernel_w)
    layer.dilation_w = pd.get(2, 1)
    layer.dilation_h = pd.get(12, layer.dilation_w)
    layer.stride_w = pd.get(3, 1)
    layer.stride_h = pd.get(13, layer.stride_w)
    layer.pad_left = pd.get(4, 0)
    layer.pad_right = pd.get(15, layer.pad_left)
    layer.pad_top = pd.get(14, layer.pad_left)
    layer.pad_bottom = pd.get(16, layer.pad_top)


def check_window_params(layer) -> None:
    """What every 2-D (de)convolution needs of its params (shared with Deconvolution)."""
    # with dynamic weights the weight blob gives the output channels: num_output may be 0
    # (pnnx writes 0), and the group split is checked when the blob arrives
    dynamic = getattr(layer, "dynamic_weight", 0)
    if layer.num_output <= 0 and not dynamic:
        raise ParamError(f"num_output (0) must be positive, got {layer.num_output}")
    if layer.group <= 0 or (layer.num_output % layer.group and not dynamic):
        raise ParamError(f"num_output {layer.num_output} is not divisible by group {layer.group}")
    for name in ("stride_w", "stride_h", "dilation_w", "dilation_h"):
        if getattr(layer, name) <= 0:
            raise ParamError(f"{name} must be positive, got {getattr(layer, name)}")
    if not 0 <= layer.activation_type <= 6:
        raise ParamError(f"activation_type (9) must be 0-6, got {layer.activation_type}")
    pads = (layer.pad_left, layer.pad_right, layer.pad_top, layer.pad_bottom)
    if max(pads) > 0 and min(pads) < 0:
        # ncnn fails (-100) on a SAME pad among explicit ones and corrupts memory on other negatives
        raise ParamError(f"pads (4/15/14/16) {pads} mix positive and negative values")


def check_weight_size(layer) -> None:
    """A positive kernel and a weight_data_size that num_output * kernel area divides
    (weights given as blobs, dynamic_weight, are checked when they arrive)."""
    if layer.dynamic_weight:
        return
    if layer.kernel_w <= 0 or layer.kernel_h <= 0:
        raise ParamError(f"kernel must be positive, got {layer.kernel_w}x{layer.kernel_h}")
    per_input = layer.num_output * layer.kernel_w * layer.kernel_h
    if layer.weight_data_size <= 0 or layer.weight_data_size % per_input:
        raise ParamError(f"weight_data_size (6) {layer.weight_data_size} is not a positive multiple "
                         f"of num_output*kernel_w*kernel_h = {per_input}")


@register_layer("Convolution")
class Convolution(Layer):
    # a 1-D input to a 1x1 kernel runs as InnerProduct (Convolution only, not its subclasses)
    flat_input_path = True

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.group = 1
        # numpy path: give the output channels-last (set by vkncnn/channels_last.py)
        self.channels_last_top = False
        # GPU: the allocator of a layer that may take the Winograd path (set at upload)
        # and that path's weights per output tile size F, made on first use (gpu/ops/winograd_convolution.py)
        self.winograd_allocator = None
        self.winograd_products: dict = {}

    # -- params ------------------------------------------------------------------------------
    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        load_window_params(self, pd)
        self.pad_value = pd.get(18, 0.0)
        self.bias_term = pd.get(5, 0)
        self.weight_data_size = pd.get(6, 0)
        self.group = self._load_group(pd)
        self.int8_scale_term = pd.get(8, 0)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        self.dynamic_weight = pd.get(19, 0)
        if self.dynamic_weight:
            self.one_blob_only = False
        self._check_params()
        # int8 inference (exact integer sums) and weights that arrive as blobs run on numpy
        self.support_vulkan = not (self.int8_scale_term or self.dynamic_weight)
        return 0

    def _load_group(self, pd) -> int:
        return 1

    def _check_params(self) -> None:
        check_window_params(self)
        self.support_int8_storage = bool(self.int8_scale_term)
        check_weight_size(self)

    @property
    def pads(self) -> tuple[int, int, int, int]:
        return self.pad_left, self.pad_right, self.pad_top, self.pad_bottom

    # -- weights -----------------------------------------------------------------------------
    def load_model(self, mb) -> int:
        if self.dynamic_weight:
            return 0
        weight = mb.load(self.weight_data_size, 0)
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        if self.int8_scale_term:
            self._load_int8_scales(mb)
        elif weight.dtype == np.int8:
            raise WeightError("int8 weights but int8_scale_term (8) is 0: no scales to dequantize them")
        self._prepare_weights(weight)
        return 0

    def _load_int8_scales(self, mb) -> None:
        self.weight_int8_scales = mb.load(self.num_output, 1)
        self.bottom_int8_scale = float(mb.load(1, 1)[0])
        self.top_int8_scale = float(mb.load(1, 1)[0]) if self.int8_scale_term > 100 else None

    def _per_output_weight_scales(self) -> np.ndarray:
        return np.asarray(self.weight_int8_scales, np.float32)

    def _prepare_weights(self, weight: np.ndarray) -> None:
        """Lay the weights out as matrices once; int8 models keep an exact int8 copy too."""
        kernel = (self.kernel_h, self.kernel_w)
        self.num_input_g = self.weight_data_size // (self.num_output * self.kernel_w * self.kernel_h)
        flat = weight.reshape(self.num_output, -1)
        if self.int8_scale_term:
            scales = self._per_output_weight_scales()[:, None]
            if weight.dtype == np.int8:
                q = flat
                with np.errstate(divide="ignore", invalid="ignore"):
                    fp = np.where(scales == 0, 0, q.astype(np.float32) / scales).astype(np.float32)
            else:
                q = conv.quantize(flat, scales)
                fp = flat
            self.weight_int8 = conv.prepare_conv_weight(q.astype(np.float64), self.num_output, self.group, kernel)
            self.scale_in = conv.dequantize_scales(self.bottom_int8_scale, self._per_output_weight_scales())
        else:
            fp = flat
        self.weight_mat = conv.prepare_conv_weight(fp.astype(np.float32), self.num_output, self.group, kernel)

    # -- forward -------------------------------------------------------------------------------
    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if self.dynamic_weight:
            return [self._forward_dynamic(bottoms, opt)]
        use_int8 = bool(self.int8_scale_term) and getattr(opt, "use_int8_inference", True)
        if x.ndim == 1 and self.kernel_w == 1 and self.kernel_h == 1 and self.flat_input_path and not use_int8:
            return [self._forward_flat(x)]
        x = self._as_planes(x)
        self._check_channels(x.shape[0], self.num_input_g)
        kernel = (self.kernel_h, self.kernel_w)
        if use_int8:
            return [self._forward_int8(x, opt)]
        x = x.astype(np.float32, copy=False)
        pads = conv.conv_padding(x.shape[1], x.shape[2], kernel, self._stride, self._dilation, self.pads)
        ph, pw, oh, ow = self._check_extent(x, pads, kernel)
        fp32_kernel = self._fp32_kernel()
        check_window(opt, (x.shape[0], ph, pw), (self.num_output, oh, ow), fp32_kernel.column_count(x.shape[0], oh, ow))
        return [fp32_kernel(x, pads, self.pad_value, getattr(opt, "num_threads", 1), self.channels_last_top)]

    def _fp32_kernel(self) -> ConvKernel:
        """The numpy convolution with its prepared weights, made once (again only if the
        weights were replaced)."""
        kernel = getattr(self, "_kernel", None)
        if kernel is None or kernel.weight is not self.weight_mat or kernel.bias_source is not self.bias_data:
            kernel = ConvKernel(self.weight_mat, (self.kernel_h, self.kernel_w), self._stride, self._dilation,
                                self.bias_data, self.activation_type, self.activation_params)
            self._kernel = kernel
        return kernel

    @property
    def _stride(self) -> tuple[int, int]:
        return self.stride_h, self.stride_w

    @property
    def _dilation(self) -> tuple[int, int]:
        return self.dilation_h, self.dilation_w

    def _as_planes(self, x: np.ndarray) -> np.ndarray:
        """ncnn reads any blob as (c, h, w): 1-D is one row, 2-D one channel."""
        if x.ndim == 1:
            return x.reshape(1, 1, -1)
        if x.ndim == 2:
            return x[None]
        if x.ndim == 4:
            if x.shape[1] != 1:
                raise ShapeError(f"{self.type or 'Convolution'} takes (c, h, w) input; got 4-D {x.shape} "
                                 "with depth > 1 (use Convolution3D)")
            return x[:, 0]
        return x

    def _check_channels(self, channels: int, num_input_g: int) -> None:
        if channels != num_input_g * self.group:
            raise ShapeError(f"input has {channels} channels but the weights expect "
                             f"{num_input_g * self.group} ({num_input_g} per group x {self.group} groups)")

    def _pad(self, x: np.ndarray, kernel, value, opt, outc: int, itemsize: int = 4) -> np.ndarray:
        """x padded for conv.conv2d, once the buffers it and conv2d make fit the budget
        (`itemsize`: 8 on the int8 path, where conv2d copies the padded input to float64 and
        sums in it)."""
        pads = conv.conv_padding(x.shape[1], x.shape[2], kernel, self._stride, self._dilation, self.pads)
        ph, pw, oh, ow = self._check_extent(x, pads, kernel)
        taps = kernel[0] * kernel[1]
        depthwise = x.shape[0] == self.group and taps > 1  # conv2d's per-tap path: no columns
        check_window(opt, (x.shape[0], ph, pw), (outc, oh, ow), itemsize=itemsize,
                     columns=0 if depthwise or taps == 1 else x.shape[0] * taps * oh * ow)
        return conv.pad_planes(x, *pads, value)

    def _check_extent(self, x: np.ndarray, pads, kernel) -> tuple[int, int, int, int]:
        """(padded h, padded w, output h, output w); a ShapeError if the kernel does not fit."""
        top, bottom, left, right = pads
        ph, pw = x.shape[1] + top + bottom, x.shape[2] + left + right
        ext_h = conv.kernel_extent(kernel[0], self.dilation_h)
        ext_w = conv.kernel_extent(kernel[1], self.dilation_w)
        if ph < ext_h or pw < ext_w:
            raise ShapeError(f"input {x.shape[1]}x{x.shape[2]} (padded {ph}x{pw}) is "
                             f"smaller than the kernel extent {ext_h}x{ext_w}")
        return ph, pw, (ph - ext_h) // self.stride_h + 1, (pw - ext_w) // self.stride_w + 1

    def _forward_flat(self, x: np.ndarray) -> np.ndarray:
        """ncnn's 1-D compatibility path: a 1x1 convolution over a flat vector is an InnerProduct.
        (ncnn's int8 path does not take it: there a 1-D input is one channel, like any other.)"""
        if x.size != self.num_input_g:
            raise ShapeError(f"1-D input of {x.size} values to a 1x1 Convolution expecting {self.num_input_g}")
        if any(p > 0 for p in self.pads):
            # ncnn pads a (w, 1, 1) blob here and then fails (or keeps only the pad corner)
            raise ShapeError(f"1-D input to a padded 1x1 Convolution (pads {self.pads}): ncnn has no "
                             "result for this; reshape the input to (c, 1, 1) or drop the pads")
        out = self.weight_mat[0] @ x.astype(np.float32)
        if self.bias_data is not None:
            out = out + self.bias_data
        return fused_activation(out, self.activation_type, self.activation_params)

    def _forward_int8(self, x: np.ndarray, opt) -> np.ndarray:
        kernel = (self.kernel_h, self.kernel_w)
        xq = x if x.dtype == np.int8 else conv.quantize(x, self.bottom_int8_scale)
        # ncnn pads the int8 tensor: the pad value is converted to int8 as C does (truncation)
        pad = np.trunc(self.pad_value)
        # beyond int range C's conversion is undefined: x86 gives INT_MIN, whose low byte is 0
        pad_q = np.array(int(pad) if abs(pad) < 2**31 else -(2**31)).astype(np.int8)
        xp = self._pad(xq, kernel, pad_q, opt, self.num_output, itemsize=8)
        acc = conv.conv2d(xp, self.weight_int8, kernel, self._stride, self._dilation, dtype=np.float64)
        out = acc.astype(np.float32) * self.scale_in[:, None, None]
        if self.bias_data is not None:
            out += self.bias_data[:, None, None]
        out = fused_activation(out, self.activation_type, self.activation_params)
        if self.top_int8_scale is not None:
            return conv.quantize(out, self.top_int8_scale)
        return out

    def _forward_dynamic(self, bottoms, opt) -> np.ndarray:
        """Weight (outc, inc_g, kh, kw) and bias come as blobs 1 and 2."""
        need = 3 if self.bias_term else 2
        if len(bottoms) < need:
            raise ShapeError(f"dynamic_weight needs {need} inputs (x, weight{', bias' if self.bias_term else ''}), "
                             f"got {len(bottoms)}")
        x, weight = bottoms[0], np.asarray(bottoms[1], np.float32)
        if weight.size == 0:
            raise ShapeError(f"dynamic weight {weight.shape} is empty")
        kw = weight.shape[-1]
        kh = weight.shape[-2] if weight.ndim >= 2 else 1
        outc = weight.shape[0] if weight.ndim >= 3 else 1
        if outc % self.group or weight.size % (outc * kh * kw):
            raise ShapeError(f"dynamic weight {weight.shape} does not split into {self.group} groups")
        inc_g = weight.size // (outc * kh * kw)
        bias = None
        if self.bias_term:
            bias = np.asarray(bottoms[2], np.float32).ravel()
            if bias.size != outc:
                raise ShapeError(f"dynamic bias has {bias.size} values, expected {outc}")
        x = self._as_planes(x)
        self._check_channels(x.shape[0], inc_g)
        wmat = conv.prepare_conv_weight(weight, outc, self.group, (kh, kw))
        xp = self._pad(x.astype(np.float32, copy=False), (kh, kw), self.pad_value, opt, outc)
        out = conv.conv2d(xp, wmat, (kh, kw), self._stride, self._dilation, bias)
        return fused_activation(out, self.activation_type, self.activation_params)

    # -- GPU -----------------------------------------------------------------------------------
    @property
    def _gpu_path(self) -> str:
        return conv_path(self.num_input_g, self.num_output // self.group, self.group)

    def upload_model(self, cmd, opt) -> int:
        """Weights as the shaders read them: [tap][channel] depthwise, [oc][ic][tap] for small
        groups (ncnn's own order), else [g][oc][tap][ic] for the matrix product."""
        path = self._gpu_path
        self.weight_gpu, self.bias_gpu = upload_conv_weights(
            self, cmd, opt, path, self.kernel_h * self.kernel_w, taps_first=False)
        # a plan may take the Winograd path (gpu/ops/winograd_convolution.py), which uploads its own weights
        # into the same allocator on first use
        self.winograd_products = {}
        self.winograd_allocator = None
        if (path == "gemm" and winograd.winograd_device(cmd.vkdev)
                and winograd.winograd_shape_ok((self.kernel_h, self.kernel_w), self._stride, self._dilation,
                                               self.group, self.num_input_g, self.num_output)):
            self.winograd_allocator = opt.blob_vkallocator
        return 0

    def accepts_residual(self) -> bool:
        """Can the GPU planner fold a following Eltwise sum into this layer's dispatch
        (forward_gpu's `residual`)? The matrix-product kernels add it before the activation,
        so only a layer without an activation of its own qualifies, and only on a device with
        the storage buffers to bind it (residual_fits)."""
        return (self._gpu_path == "gemm" and self.activation_type == 0
                and self.vkdev is not None and residual_fits(self.vkdev))

    @property
    def takes_gpu_activation(self) -> bool:
        """Can the GPU planner fold a following activation layer (ReLU, Swish) into this
        layer's dispatch (forward_gpu's `activation`)? Every kernel applies one; a layer with
        an activation of its own keeps it."""
        return self.activation_type == 0

    def forward_gpu(self, bottoms, cmd, opt, residual=None, activation=None):
        """`residual` (a blob of the output's shape) is added before `activation`
        ((type, p0, p1), replacing the layer's own, which accepts_residual requires to be none)."""
        x = bottoms[0]
        check_weight_storage(self, x)
        flat = (x.dims == 1 and self.kernel_w == 1 and self.kernel_h == 1 and self.flat_input_path)
        if flat and any(p > 0 for p in self.pads):
            raise ShapeError(f"1-D input to a padded 1x1 Convolution (pads {self.pads}): ncnn has no "
                             "result for this; reshape the input to (c, 1, 1) or drop the pads")
        x, plane = conv_input_planes(x, cmd, opt, flat, self.type or "Convolution")
        self._check_channels(plane.channels, self.num_input_g)
        kernel = (self.kernel_h, self.kernel_w)
        top, bottom, left, right = conv.conv_padding(plane.h, plane.w, kernel, self._stride, self._dilation,
                                                     self.pads)
        ext_h = conv.kernel_extent(self.kernel_h, self.dilation_h)
        ext_w = conv.kernel_extent(self.kernel_w, self.dilation_w)
        ph, pw = plane.h + top + bottom, plane.w + left + right
        if ph < ext_h or pw < ext_w:
            raise ShapeError(f"input {plane.h}x{plane.w} (padded {ph}x{pw}) is smaller than the kernel "
                             f"extent {ext_h}x{ext_w}")
        outh, outw = (ph - ext_h) // self.stride_h + 1, (pw - ext_w) // self.stride_w + 1
        # the shaders read the input through the pads: no padded copy, only the output
        check_alloc(opt, (self.num_output, outh, outw), x.scalar_size(), "the output")
        geometry = ConvGeometry(self.kernel_w, self.kernel_h, self.dilation_w, self.dilation_h, self.stride_w,
                                self.stride_h, top, left, self.pad_value)
        shape = (self.num_output,) if flat else (self.num_output, outh, outw)
        return [record_conv(self, cmd, opt, x, plane, shape, geometry, self._gpu_path, deconv=False,
                            residual=residual, activation=activation)]
