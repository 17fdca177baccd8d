"""ConvolutionDepthWise1D against real ncnn: groups (depthwise and grouped), kernels,
strides, dilations, pads (explicit, asymmetric, SAME_UPPER/LOWER) with pad_value, bias,
activations, 1-D input, dynamic weights, errors and a GPU net."""

from itertools import product

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

TYPE = "ConvolutionDepthWise1D"
# (input channels, output channels, group)
GROUPS = [(1, 1, 1), (3, 3, 3), (4, 8, 4), (8, 8, 8), (12, 12, 12), (4, 6, 2), (12, 8, 4), (3, 6, 1)]
PADS = [{}, {4: 1}, {4: 2, 15: 0}, {4: -233, 18: 0.5}, {4: -234}, {4: 0, 15: 3, 18: -0.7}]


def dw1_params(outc, inc, k, group, bias=True, extra=None):
    return {0: outc, 1: k, 5: int(bias), 6: outc * (inc // group) * k, 7: group, **(extra or {})}


def dw1_weights(outc, inc, k, group, bias=True, seed=0):
    w = [tagged(rand(outc, inc // group, k, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 5], [1, 2, 3], [1, 2])):
        inc, outc, g = GROUPS[i % len(GROUPS)]
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, g, d * (k - 1) + 1 + (i * 3) % 8))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,g,w", _grid())
def test_kernel_stride_dilation_pads_groups(k, s, d, pads, inc, outc, g, w):
    check_layer(TYPE, dw1_params(outc, inc, k, g, extra={2: d, 3: s, **pads}),
                dw1_weights(outc, inc, k, g, seed=k), [rand(inc, w, seed=s)])


@pytest.mark.parametrize("act,act_params", [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None),
                                            (5, None), (6, [0.2, 0.5])])
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, dw1_params(8, 8, 3, 8, bias=bias, extra=extra), dw1_weights(8, 8, 3, 8, bias=bias),
                [rand(8, 13)])


@pytest.mark.parametrize("shape", [(11,), (1, 11), (1, 1, 11)])
def test_single_channel_dims(shape):
    check_layer(TYPE, dw1_params(3, 1, 3, 1), dw1_weights(3, 1, 3, 1), [rand(*shape)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("group,pads", [(2, {}), (4, {4: -233, 3: 2})])
def test_dynamic_weight(bias, group, pads):
    inputs = [rand(4, 12), rand(8, 4 // group, 3, seed=5)] + ([rand(8, seed=6)] if bias else [])
    check_layer(TYPE, {0: 8, 1: 3, 5: int(bias), 7: group, 19: 1, **pads}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(6, 12), (4, 2, 12), (4, 2)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(dw1_params(4, 4, 3, 4), dw1_weights(4, 4, 3, 4), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 6, 1: 3, 6: 18, 7: 4}, {0: 4, 1: 3, 6: 13, 7: 4},
                                    {0: 4, 1: 3, 6: 12, 7: 4, 4: -233, 15: 1}, {0: 4, 1: 3, 6: 12, 7: 4, 9: 9}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, dw1_weights(4, 4, 3, 4), [rand(4, 12)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, dw1_params(12, 12, 3, 12, extra={4: 1, 9: 1}), dw1_weights(12, 12, 3, 12), [rand(12, 17)])
