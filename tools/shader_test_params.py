"""The weight sizes `vkncnn shadertest` fills in when a layer's params leave them out.

ncnn layers with weights take their size as a param (Convolution's 6=weight_data_size,
InnerProduct's 2=, BatchNorm's 0=channels, ...), which the input shape and the other
params already decide: 16 outputs over 3 input channels with a 3x3 kernel is 6=432.
`fill_weight_sizes` computes the ones missing from the first input's numpy shape; what
it cannot decide (no kernel size, channels that a group does not divide, an input of
the wrong rank) it leaves out, and the layer's own check says what is wrong.
"""

from __future__ import annotations

import math

# type -> (input rank, number of kernel axes, group param id or None)
_WINDOWED = {
    "Convolution": (3, 2, None), "Deconvolution": (3, 2, None), "DeformableConv2D": (3, 2, None),
    "ConvolutionDepthWise": (3, 2, 7), "DeconvolutionDepthWise": (3, 2, 7),
    "Convolution1D": (2, 1, None), "Deconvolution1D": (2, 1, None),
    "ConvolutionDepthWise1D": (2, 1, 7), "DeconvolutionDepthWise1D": (2, 1, 7),
    "Convolution3D": (4, 3, None), "Deconvolution3D": (4, 3, None),
    "ConvolutionDepthWise3D": (4, 3, 7), "DeconvolutionDepthWise3D": (4, 3, 7),
}
_RECURRENT_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
# layers with one weight per channel (numpy axis 0 in every rank): type -> the size's param id
_PER_CHANNEL = {"BatchNorm": 0, "Scale": 0, "Bias": 0, "PReLU": 0, "InstanceNorm": 0}
_KERNEL_IDS = (1, 11, 21)  # kernel_w, kernel_h (default kernel_w), kernel_d (default kernel_w)


def _windowed(type_name: str, params: dict, shape: tuple) -> tuple[int, int] | None:
    rank, axes, group_id = _WINDOWED[type_name]
    num_output, kernel_w = params.get(0, 0), params.get(1, 0)
    if len(shape) != rank or not isinstance(num_output, int) or not isinstance(kernel_w, int):
        return None
    kernel = [params.get(k, kernel_w) for k in _KERNEL_IDS[:axes]]
    group = params.get(group_id, 1) if group_id is not None else 1
    channels = shape[0]
    if num_output <= 0 or min(kernel) <= 0 or not isinstance(group, int) or group <= 0 or channels % group:
        return None
    return 6, num_output * (channels // group) * math.prod(kernel)


def _missing_size(type_name: str, params: dict, shape: tuple) -> tuple[int, int] | None:
    """(param id, value) of the weight size the layer needs, or None when it cannot be told."""
    if type_name in _WINDOWED:
        return _windowed(type_name, params, shape)
    if type_name in _PER_CHANNEL:
        return _PER_CHANNEL[type_name], shape[0]
    if type_name == "InnerProduct" and params.get(0, 0) > 0:
        # a 2-D input is a batch of rows (ncnn's gemm form); anything else is flattened
        return 2, params[0] * (shape[-1] if len(shape) == 2 else math.prod(shape))
    if type_name == "Embed" and params.get(0, 0) > 0 and params.get(1, 0) > 0:
        return 3, params[0] * params[1]
    if type_name in _RECURRENT_GATES and len(shape) == 2 and params.get(0, 0) > 0:
        hidden = params.get(3, params[0]) if type_name == "LSTM" else params[0]
        directions = 2 if params.get(2, 0) == 2 else 1
        return 1, directions * _RECURRENT_GATES[type_name] * hidden * shape[1]
    if type_name == "MultiHeadAttention" and params.get(0, 0) > 0 and len(shape) == 2:
        return 2, params[0] * shape[1]  # embed_dim x the query's width
    return None


_SIZE_PARAM = {**{t: 6 for t in _WINDOWED}, **_PER_CHANNEL, "InnerProduct": 2, "Embed": 3,
               **{t: 1 for t in _RECURRENT_GATES}, "MultiHeadAttention": 2}


def fill_weight_sizes(type_name: str, params: dict, shapes: list[tuple]) -> tuple[dict, dict]:
    """(params with the missing weight size filled in, {param id: value} of what was filled)."""
    pid = _SIZE_PARAM.get(type_name)
    if pid is None or pid in params or not shapes or not shapes[0]:
        return params, {}
    try:
        found = _missing_size(type_name, params, tuple(shapes[0]))
    except TypeError:  # a param given as a float, a string or an array: the layer's own check reports it
        return params, {}
    if found is None:
        return params, {}
    key, value = found
    return {**params, key: value}, {key: value}
