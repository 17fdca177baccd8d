"""Params and input handling shared by the grouped and transposed 1-D convolutions.

Not a layer: ConvolutionDepthWise1D, Deconvolution1D and DeconvolutionDepthWise1D
read their window params here (ids as Convolution1D: 0 num_output, 1 kernel_w,
2 dilation_w, 3 stride_w, 4 pad_left, 15 pad_right (default pad_left), 5 bias_term,
6 weight_data_size, 7 group, 9/10 activation). A sequence blob is (channels, length);
a 1-D blob is one channel and a (1, h, w) blob is the same memory as (h, w).
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv
from vkncnn.errors import ParamError, ShapeError

from .alloc_limit import check_window, out_extent


def load_window1d_params(layer, pd, group_id: int | None) -> None:
    """The common params; `group_id` None for the ungrouped layers."""
    layer.num_output = pd.get(0, 0)
    layer.kernel_w = pd.get(1, 0)
    layer.dilation_w = pd.get(2, 1)
    layer.stride_w = pd.get(3, 1)
    layer.pad_left = pd.get(4, 0)
    layer.pad_right = pd.get(15, layer.pad_left)
    layer.bias_term = pd.get(5, 0)
    layer.weight_data_size = pd.get(6, 0)
    layer.group = pd.get(group_id, 1) if group_id is not None else 1
    layer.activation_type = pd.get(9, 0)
    layer.activation_params = pd.get(10, np.zeros(0, np.float32))


def check_window1d_params(layer) -> None:
    # with dynamic weights the weight blob gives the output channels (num_output may be 0) and
    # the group split is checked when it arrives
    if layer.num_output <= 0 and not layer.dynamic_weight:
        raise ParamError(f"num_output (0) must be positive, got {layer.num_output}")
    if layer.group <= 0 or (layer.num_output % layer.group and not layer.dynamic_weight):
        raise ParamError(f"num_output {layer.num_output} is not divisible by group (7) {layer.group}")
    if layer.stride_w <= 0 or layer.dilation_w <= 0:
        raise ParamError(f"stride_w/dilation_w (3/2) must be positive, got {layer.stride_w}/{layer.dilation_w}")
    if not 0 <= layer.activation_type <= 6:
        raise ParamError(f"activation_type (9) must be 0-6, got {layer.activation_type}")
    pads = (layer.pad_left, layer.pad_right)
    if max(pads) > 0 and min(pads) < 0:
        raise ParamError(f"pads (4/15) {pads} mix positive and negative values")
    if not layer.dynamic_weight:
        per_input = layer.num_output * layer.kernel_w
        if layer.kernel_w <= 0 or layer.weight_data_size <= 0 or layer.weight_data_size % per_input:
            raise ParamError(f"weight_data_size (6) {layer.weight_data_size} is not a positive multiple "
                             f"of num_output*kernel_w = {per_input} (kernel_w {layer.kernel_w})")


def as_sequence(x: np.ndarray, type_name: str) -> np.ndarray:
    """A blob as (channels, length) float32."""
    if x.ndim == 1:
        x = x[None]
    elif x.ndim == 3 and x.shape[0] == 1:
        x = x[0]
    if x.ndim != 2:
        raise ShapeError(f"{type_name} takes (channels, length) input, got {x.ndim}-D {x.shape}")
    return x.astype(np.float32, copy=False)


def check_groups(channels: int, inc_g: int, group: int) -> None:
    if channels != inc_g * group:
        raise ShapeError(f"input has {channels} channels (rows) but the weights expect {inc_g * group} "
                         f"({inc_g} per group x {group} groups)")


def conv1d_pads(length: int, kernel_w: int, stride_w: int, dilation_w: int, left: int, right: int):
    """(left, right) ncnn adds before a 1-D convolution: explicit, or SAME_UPPER/LOWER when
    both are -233/-234 (the 2-D rule on a one-row plane)."""
    if left > 0 or right > 0:
        return left, right
    _, _, lo, hi = conv.conv_padding(1, length, (1, kernel_w), (1, stride_w), (1, dilation_w), (left, right) * 2)
    return lo, hi


def check_conv1d_budget(opt, channels: int, padded: int, wmat: np.ndarray, kernel_w: int, stride_w: int,
                        dilation_w: int) -> None:
    """conv.conv2d on one-row planes (wmat: (groups, outc_g, inc_g*kernel_w)): the padded
    input, the output and, unless a group has one input channel (conv2d's per-tap path)
    or the kernel one tap, the im2col columns. Pads come from params: checked first."""
    groups, outc_g, k_g = wmat.shape
    outw = out_extent(padded, kernel_w, stride_w, dilation_w)
    columns = 0 if kernel_w == 1 or k_g == kernel_w else channels * kernel_w * max(outw, 0)
    check_window(opt, (channels, padded), (groups * outc_g, outw), columns)


def dynamic_bias(bottoms, bias_term: int, outc: int) -> np.ndarray | None:
    """The bias blob of a dynamic_weight layer (input 2), checked against outc."""
    if not bias_term:
        return None
    bias = np.asarray(bottoms[2], np.float32).ravel()
    if bias.size != outc:
        raise ShapeError(f"dynamic bias has {bias.size} values, expected {outc}")
    return bias


def check_dynamic_inputs(bottoms, bias_term: int) -> None:
    need = 3 if bias_term else 2
    if len(bottoms) < need:
        raise ShapeError(f"dynamic_weight needs {need} inputs (x, weight{', bias' if bias_term else ''}), "
                         f"got {len(bottoms)}")
