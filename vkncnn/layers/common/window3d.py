"""Params and input handling shared by the volumetric (3D) convolution family.

Not a layer: Convolution3D, ConvolutionDepthWise3D, Deconvolution3D and
DeconvolutionDepthWise3D read their kernel/dilation/stride/pad params here. ncnn's ids:
w axis 1-4 (kernel, dilation, stride, pad_left) and 15 (pad_right); h axis 11-14 and
16 (pad_bottom); d axis 21-24 and 17 (pad_behind). An absent h or d value repeats
the w one, an absent right/bottom/behind pad its left/top/front partner.
"""

from __future__ import annotations

import numpy as np

from vkncnn.errors import ParamError, ShapeError


def load_window3d_params(layer, pd) -> None:
    layer.kernel_w = pd.get(1, 0)
    layer.kernel_h = pd.get(11, layer.kernel_w)
    layer.kernel_d = pd.get(21, layer.kernel_w)
    layer.dilation_w = pd.get(2, 1)
    layer.dilation_h = pd.get(12, layer.dilation_w)
    layer.dilation_d = pd.get(22, layer.dilation_w)
    layer.stride_w = pd.get(3, 1)
    layer.stride_h = pd.get(13, layer.stride_w)
    layer.stride_d = pd.get(23, layer.stride_w)
    layer.pad_left = pd.get(4, 0)
    layer.pad_right = pd.get(15, layer.pad_left)
    layer.pad_top = pd.get(14, layer.pad_left)
    layer.pad_bottom = pd.get(16, layer.pad_top)
    layer.pad_front = pd.get(24, layer.pad_left)
    layer.pad_behind = pd.get(17, layer.pad_front)


def check_window3d_params(layer) -> None:
    """num_output, group, kernel, strides, dilations, activation and pads of a 3D
    (de)convolution, and a weight_data_size that the kernel volume divides."""
    if layer.num_output <= 0:
        raise ParamError(f"num_output (0) must be positive, got {layer.num_output}")
    if layer.group <= 0 or layer.num_output % layer.group:
        raise ParamError(f"num_output {layer.num_output} is not divisible by group (7) {layer.group}")
    for name in ("kernel", "stride", "dilation"):
        values = [getattr(layer, f"{name}_{axis}") for axis in "dhw"]
        if min(values) <= 0:
            raise ParamError(f"{name} (d, h, w) must be positive, got {values}")
    if not 0 <= layer.activation_type <= 6:
        raise ParamError(f"activation_type (9) must be 0-6, got {layer.activation_type}")
    pads = [p for pair in pads3d(layer) for p in pair]
    if max(pads) > 0 and min(pads) < 0:
        raise ParamError(f"pads (24/17, 14/16, 4/15) {pads} mix positive and negative values")
    per_input = layer.num_output * layer.kernel_w * layer.kernel_h * layer.kernel_d
    if layer.weight_data_size <= 0 or layer.weight_data_size % per_input:
        raise ParamError(f"weight_data_size (6) {layer.weight_data_size} is not a positive multiple "
                         f"of num_output*kernel_d*kernel_h*kernel_w = {per_input}")


def pads3d(layer) -> list[tuple[int, int]]:
    """((front, behind), (top, bottom), (left, right)): the (d, h, w) order of the arrays."""
    return [(layer.pad_front, layer.pad_behind), (layer.pad_top, layer.pad_bottom),
            (layer.pad_left, layer.pad_right)]


def kernel3d(layer) -> tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]:
    """(kernel, stride, dilation), each in (d, h, w) order."""
    return ((layer.kernel_d, layer.kernel_h, layer.kernel_w), (layer.stride_d, layer.stride_h, layer.stride_w),
            (layer.dilation_d, layer.dilation_h, layer.dilation_w))


def as_volume(x: np.ndarray, type_name: str) -> np.ndarray:
    """Any blob as ncnn reads it in a 3D layer, (c, d, h, w): a 3-D blob is one slice deep,
    a 2-D blob one channel, a 1-D blob one row."""
    if x.ndim == 4:
        return x
    if x.ndim == 3:
        return x[:, None]
    if x.ndim == 2:
        return x[None, None]
    if x.ndim == 1:
        return x[None, None, None]
    raise ShapeError(f"{type_name} takes a (c, d, h, w) blob, got shape {x.shape}")
