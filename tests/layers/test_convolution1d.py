"""Convolution1D against real ncnn: (channels, length) input, kernels, strides,
dilations, pads (explicit, asymmetric, SAME_UPPER/LOWER), pad_value, bias,
activations, 1-D input and dynamic weights."""

from itertools import product

import pytest

from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 16), (16, 24), (24, 1)]
PADS = [{}, {4: 1}, {4: 2, 15: 0}, {4: -233}, {4: -234}, {4: 0, 15: 3}]


def c1_params(outc, inc, k, bias=True, extra=None):
    return {0: outc, 1: k, 5: int(bias), 6: outc * inc * k, **(extra or {})}


def c1_weights(outc, inc, k, bias=True, seed=0):
    w = [tagged(rand(outc, inc, k, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 5, 7], [1, 2, 3], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, d * (k - 1) + 1 + (i * 3) % 8))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,w", _grid())
def test_kernel_stride_dilation_pads(k, s, d, pads, inc, outc, w):
    check_layer("Convolution1D", c1_params(outc, inc, k, extra={2: d, 3: s, **pads}),
                c1_weights(outc, inc, k, seed=k), [rand(inc, w, seed=s)])


@pytest.mark.parametrize("act,act_params", [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None),
                                            (5, None), (6, [0.2, 0.5])])
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer("Convolution1D", c1_params(8, 4, 3, bias=bias, extra=extra), c1_weights(8, 4, 3, bias=bias),
                [rand(4, 13)])


@pytest.mark.parametrize("pads", [{4: 2}, {4: -233, 3: 2}, {4: -234, 3: 3}])
def test_pad_value(pads):
    check_layer("Convolution1D", c1_params(4, 3, 4, extra={18: 0.6, **pads}), c1_weights(4, 3, 4), [rand(3, 10)])


@pytest.mark.parametrize("shape", [(11,), (1, 11), (1, 1, 11)])
def test_single_channel_dims(shape):
    check_layer("Convolution1D", c1_params(5, 1, 3), c1_weights(5, 1, 3), [rand(*shape)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("pads", [{}, {4: -233, 3: 2}])
def test_dynamic_weight(bias, pads):
    inputs = [rand(3, 12), rand(4, 3, 3, seed=5)] + ([rand(4, seed=6)] if bias else [])
    check_layer("Convolution1D", {0: 4, 1: 3, 5: int(bias), 19: 1, **pads}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text("Convolution1D", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(4, 12), (3, 2, 12), (3, 2)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(c1_params(4, 3, 3), c1_weights(4, 3, 3), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 35}, {0: 4, 1: 3, 6: 36, 4: -233, 15: 1}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, c1_weights(4, 3, 3), [rand(3, 12)])


@pytest.mark.parametrize("type_name,group,inc,outc", [
    ("Convolution1D", 1, 4, 3), ("ConvolutionDepthWise1D", 4, 4, 4), ("ConvolutionDepthWise1D", 2, 4, 6)])
def test_dynamic_weight_without_num_output(type_name, group, inc, outc):
    """num_output 0 and no kernel size: the weight blob (outc, inc/group, kw) gives them."""
    params = {0: 0, 1: 0, 5: 1, 6: 0, 19: 1, **({7: group} if group > 1 else {})}
    check_layer(type_name, params, [], [rand(inc, 9), rand(outc, inc // group, 3, seed=2), rand(outc, seed=3)])
