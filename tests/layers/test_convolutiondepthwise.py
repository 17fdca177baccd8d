"""ConvolutionDepthWise against real ncnn: depthwise (group == channels), channel
multipliers, grouped convolution, kernels/strides/dilations/pads, activations,
dynamic weights and int8 inference (per-group and shared weight scales)."""

from itertools import product

import numpy as np
import pytest

from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

ACTIVATIONS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]
PADS = [{}, {4: 1}, {4: -233}, {4: -234}, {4: 1, 15: 0, 14: 2, 16: 1}]


def dw_params(group, inc, outc, kw, kh=None, bias=True, extra=None):
    kh = kw if kh is None else kh
    return {0: outc, 1: kw, 11: kh, 5: int(bias), 6: outc * (inc // group) * kw * kh, 7: group, **(extra or {})}


def dw_weights(group, inc, outc, kw, kh=None, bias=True, seed=0):
    kh = kw if kh is None else kh
    w = [tagged(rand(outc, inc // group, kh, kw, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _depthwise_grid():
    cases = []
    channels = [1, 3, 4, 8, 12, 16, 24]
    for i, (k, s, d) in enumerate(product([1, 2, 3, 5, 7], [1, 2], [1, 2])):
        c = channels[i % len(channels)]
        extent = d * (k - 1) + 1
        cases.append((k, s, d, PADS[i % len(PADS)], c, extent + i % 4, extent + 1 + (i * 3) % 5))
    return cases


@pytest.mark.parametrize("k,s,d,pads,c,h,w", _depthwise_grid())
def test_depthwise(k, s, d, pads, c, h, w):
    check_layer("ConvolutionDepthWise", dw_params(c, c, c, k, extra={2: d, 3: s, **pads}),
                dw_weights(c, c, c, k, seed=k), [rand(c, h, w, seed=s)])


@pytest.mark.parametrize("group,inc,outc", [
    (2, 4, 4), (3, 12, 6), (4, 8, 16), (2, 24, 12), (3, 3, 12), (12, 24, 24),  # 3,3,12: multiplier 4
])
@pytest.mark.parametrize("k,s,pads", [(3, 1, {4: 1}), (1, 2, {}), (3, 2, {4: -233}), (5, 1, {4: -234})])
def test_grouped(group, inc, outc, k, s, pads):
    check_layer("ConvolutionDepthWise", dw_params(group, inc, outc, k, extra={3: s, **pads}),
                dw_weights(group, inc, outc, k), [rand(inc, 9, 11)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer("ConvolutionDepthWise", dw_params(8, 8, 8, 3, bias=bias, extra=extra),
                dw_weights(8, 8, 8, 3, bias=bias), [rand(8, 7, 9)])


@pytest.mark.parametrize("kw,kh,sw,sh,dw,dh,pad_value", [(3, 1, 1, 2, 1, 1, 0.5), (1, 5, 2, 1, 2, 1, -1.0),
                                                        (2, 4, 3, 2, 1, 2, 0.0)])
def test_rectangular_and_pad_value(kw, kh, sw, sh, dw, dh, pad_value):
    extra = {3: sw, 13: sh, 2: dw, 12: dh, 4: 1, 14: 2, 18: pad_value}
    check_layer("ConvolutionDepthWise", dw_params(4, 4, 4, kw, kh, extra=extra), dw_weights(4, 4, 4, kw, kh),
                [rand(4, 10, 11)])


@pytest.mark.parametrize("shape", [(6, 7), (1, 6, 7), (1, 1, 6, 7)])
def test_single_channel_dims(shape):
    check_layer("ConvolutionDepthWise", dw_params(1, 1, 3, 3), dw_weights(1, 1, 3, 3), [rand(*shape)])


@pytest.mark.parametrize("group,inc,outc,bias", [(4, 4, 4, True), (2, 4, 6, False), (3, 6, 3, True)])
def test_dynamic_weight(group, inc, outc, bias):
    inputs = [rand(inc, 8, 9), rand(outc, inc // group, 3, 3, seed=3)] + ([rand(outc, seed=4)] if bias else [])
    check_layer("ConvolutionDepthWise", {0: outc, 1: 3, 5: int(bias), 7: group, 19: 1, 4: 1}, [], inputs)


@pytest.mark.parametrize("term", [1, 2, 101, 102])
@pytest.mark.parametrize("group,inc,outc,act", [(6, 6, 6, 1), (3, 6, 9, 2), (6, 6, 6, 5)])
def test_int8_inference(term, group, inc, outc, act):
    w, x = rand(outc, inc // group, 3, 3, seed=1), rand(inc, 8, 9, seed=2)
    per_group = (127 / np.abs(w.reshape(group, -1)).max(axis=1)).astype(np.float32)
    scales = per_group if term in (1, 101) else per_group[:1]
    weights = [tagged(w), raw(rand(outc, seed=3)), raw(scales), raw([127 / np.abs(x).max()])]
    if term > 100:
        weights.append(raw([3.0]))
    extra = {8: term, 4: 1, 9: act, **({10: [0.1]} if act == 2 else {})}
    check_layer("ConvolutionDepthWise", dw_params(group, inc, outc, 3, extra=extra), weights, [x])


def _run(params, weights, inputs):
    text = layer_param_text("ConvolutionDepthWise", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(5, 7, 7), (6, 2, 7, 7), (4, 2, 2)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(dw_params(2, 4, 4, 3), dw_weights(2, 4, 4, 3), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 6, 1: 3, 6: 54, 7: 4}, {0: 4, 1: 3, 6: 36, 7: 4, 8: 3}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, [tagged(rand(params[6])), raw(rand(4)), raw(rand(1))], [rand(4, 7, 7)])
