"""Deconvolution1D against real ncnn: weight layout [outc][inc][kw], kernels, strides,
dilations, pads cut after the transposed conv, output_pad_right, output_w with
SAME_UPPER/LOWER, bias, activations, 1-D input, dynamic weights (PyTorch
ConvTranspose1d layout), errors and a GPU net."""

from itertools import product

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

TYPE = "Deconvolution1D"
CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 1), (3, 3)]
PADS = [{}, {4: 1}, {4: 2, 15: 0}, {18: 1}, {4: 1, 18: 2}, {4: 0, 15: 1}]


def d1_params(outc, inc, k, bias=True, extra=None):
    return {0: outc, 1: k, 5: int(bias), 6: outc * inc * k, **(extra or {})}


def d1_weights(outc, inc, k, bias=True, seed=0):
    w = [tagged(rand(outc, inc, k, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 4, 5], [1, 2, 3], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, 3 + (i * 3) % 9))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,w", _grid())
def test_kernel_stride_dilation_pads(k, s, d, pads, inc, outc, w):
    check_layer(TYPE, d1_params(outc, inc, k, extra={2: d, 3: s, **pads}), d1_weights(outc, inc, k, seed=k),
                [rand(inc, w, seed=s)])


@pytest.mark.parametrize("mode", [-233, -234])
@pytest.mark.parametrize("out_w,stride,output_pad", [(12, 2, 0), (11, 2, 1), (8, 1, 0), (17, 3, 2), (6, 1, 0)])
def test_output_w_same_modes(mode, out_w, stride, output_pad):
    extra = {4: mode, 3: stride, 20: out_w, 18: output_pad}
    check_layer(TYPE, d1_params(4, 3, 3, extra=extra), d1_weights(4, 3, 3), [rand(3, 6)])


@pytest.mark.parametrize("act,act_params", [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None),
                                            (5, None), (6, [0.2, 0.5])])
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {3: 2, 4: 1, 18: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, d1_params(8, 4, 3, bias=bias, extra=extra), d1_weights(8, 4, 3, bias=bias), [rand(4, 9)])


@pytest.mark.parametrize("shape", [(7,), (1, 7), (1, 1, 7)])
def test_single_channel_dims(shape):
    check_layer(TYPE, d1_params(4, 1, 3, extra={3: 2}), d1_weights(4, 1, 3), [rand(*shape)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("extra", [{}, {4: 1, 3: 2}, {4: -233, 3: 2, 20: 18}])
def test_dynamic_weight(bias, extra):
    inputs = [rand(3, 9), rand(3, 5, 4, seed=5)] + ([rand(5, seed=6)] if bias else [])
    check_layer(TYPE, {0: 5, 1: 4, 5: int(bias), 28: 1, **extra}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape,extra", [((4, 9), {}), ((3, 2, 9), {}), ((3, 9), {20: 30, 4: -233}),
                                         ((3, 9), {20: 10}), ((3, 2), {4: 3})])
def test_bad_inputs_raise(shape, extra):
    with pytest.raises(ShapeError):
        _run(d1_params(4, 3, 3, extra=extra), d1_weights(4, 3, 3), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 35}, {0: 4, 1: 0, 6: 36}, {0: 4, 1: 3, 6: 36, 3: 0},
                                    {0: 4, 1: 3, 6: 36, 18: -1}, {0: 4, 1: 3, 6: 36, 4: -233, 15: 2}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, d1_weights(4, 3, 3), [rand(3, 12)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, d1_params(8, 4, 4, extra={3: 2, 4: 1, 9: 2, 10: [0.1]}), d1_weights(8, 4, 4),
                     [rand(4, 15)])
