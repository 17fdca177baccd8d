"""Deconvolution against real ncnn: weight layout [outc][inc][kh][kw], kernels,
strides, dilations, pads cut after the transposed conv (explicit and asymmetric),
output_pad, output_w/h with SAME_UPPER/LOWER, bias, activations, input dims and
dynamic weights (PyTorch ConvTranspose2d layout)."""

from itertools import product

import pytest

from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

ACTIVATIONS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]
CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 16), (16, 24), (24, 1)]
PADS = [{}, {4: 1}, {4: 2, 15: 0, 14: 1, 16: 3}, {18: 1}, {4: 1, 18: 1, 19: 0}, {4: 0, 15: 1, 14: 2, 16: 0}]


def deconv_params(outc, inc, kw, kh=None, bias=True, extra=None):
    kh = kw if kh is None else kh
    return {0: outc, 1: kw, 11: kh, 5: int(bias), 6: outc * inc * kw * kh, **(extra or {})}


def deconv_weights(outc, inc, kw, kh=None, bias=True, seed=0):
    kh = kw if kh is None else kh
    w = [tagged(rand(outc, inc, kh, kw, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 4, 5, 7], [1, 2, 3], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, 3 + i % 5, 4 + (i * 3) % 6))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,h,w", _grid())
def test_kernel_stride_dilation_pads(k, s, d, pads, inc, outc, h, w):
    check_layer("Deconvolution", deconv_params(outc, inc, k, extra={2: d, 3: s, **pads}),
                deconv_weights(outc, inc, k, seed=k), [rand(inc, h, w, seed=s)])


@pytest.mark.parametrize("mode", [-233, -234])
@pytest.mark.parametrize("out_hw,stride,output_pad", [((10, 12), 2, 0), ((9, 11), 2, 1), ((7, 8), 1, 0),
                                                       ((15, 17), 3, 2), ((5, 6), 1, 0)])
def test_output_size_same_modes(mode, out_hw, stride, output_pad):
    extra = {4: mode, 3: stride, 20: out_hw[1], 21: out_hw[0], 18: output_pad}
    check_layer("Deconvolution", deconv_params(4, 3, 3, extra=extra), deconv_weights(4, 3, 3), [rand(3, 5, 6)])


def test_same_mode_without_output_size_cuts_nothing():
    check_layer("Deconvolution", deconv_params(4, 3, 3, extra={4: -233, 3: 2}), deconv_weights(4, 3, 3),
                [rand(3, 5, 6)])


@pytest.mark.parametrize("kw,kh,sw,sh,dw,dh,extra", [
    (2, 3, 2, 1, 1, 2, {18: 1, 19: 0}),
    (4, 1, 2, 2, 1, 1, {4: 1, 14: 0}),
    (3, 5, 1, 3, 2, 1, {4: 0, 15: 2, 14: 1, 16: 0, 19: 2}),
])
def test_rectangular(kw, kh, sw, sh, dw, dh, extra):
    params = deconv_params(6, 4, kw, kh, extra={3: sw, 13: sh, 2: dw, 12: dh, **extra})
    check_layer("Deconvolution", params, deconv_weights(6, 4, kw, kh), [rand(4, 5, 7)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {3: 2, 4: 1, 18: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer("Deconvolution", deconv_params(8, 4, 3, bias=bias, extra=extra),
                deconv_weights(8, 4, 3, bias=bias), [rand(4, 5, 6)])


@pytest.mark.parametrize("shape", [(7,), (5, 7), (1, 5, 7)])
def test_single_channel_dims(shape):
    check_layer("Deconvolution", deconv_params(4, 1, 3, extra={3: 2}), deconv_weights(4, 1, 3), [rand(*shape)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("extra", [{}, {4: 1, 3: 2}, {4: -233, 3: 2, 20: 10, 21: 9}])
def test_dynamic_weight(bias, extra):
    """Weight blob (inc, outc, kh, kw), as PyTorch's ConvTranspose2d."""
    inputs = [rand(3, 5, 6), rand(3, 4, 3, 2, seed=5)] + ([rand(4, seed=6)] if bias else [])
    check_layer("Deconvolution", {0: 4, 1: 2, 11: 3, 5: int(bias), 28: 1, **extra}, [], inputs)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("extra", [{}, {3: 2, 4: -233, 18: 1, 19: 1, 20: 7, 21: 5}, {2: 2, 4: -234}])
def test_dynamic_weight_without_num_output(bias, extra):
    """num_output 0 and no kernel size (as pnnx writes and ncnn's own test runs): the weight
    blob gives them."""
    inputs = [rand(4, 7, 9), rand(4, 13, 3, 3, seed=5)] + ([rand(13, seed=6)] if bias else [])
    check_layer("Deconvolution", {0: 0, 1: 0, 5: int(bias), 6: 0, 28: 1, **extra}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text("Deconvolution", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("extra", [{20: 9, 21: 9, 3: 2}, {4: -233, 20: 14, 21: 9, 3: 2}])
def test_output_size_errors(extra):
    """ncnn produces nothing (-100) for output_w/h without pad -233/-234, and garbage for an
    output size beyond the full transposed-conv output; we raise and say why."""
    with pytest.raises(ShapeError):
        _run(deconv_params(4, 3, 3, extra=extra), deconv_weights(4, 3, 3), [rand(3, 5, 6)])


@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 2, 5, 6), (3, 1, 5, 6)])
def test_bad_inputs_raise(shape):
    """Wrong channel count; 4-D input (ncnn reads uninitialised memory there)."""
    with pytest.raises(ShapeError):
        _run(deconv_params(4, 3, 3), deconv_weights(4, 3, 3), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 100}, {0: 4, 1: 3, 6: 108, 13: 0}, {0: 4, 1: 3, 6: 108, 18: -1},
                                    {0: 4, 1: 3, 6: 108, 4: 1, 15: -1}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, deconv_weights(4, 3, 3), [rand(3, 5, 6)])
