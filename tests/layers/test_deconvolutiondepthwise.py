"""DeconvolutionDepthWise against real ncnn: depthwise 2x upsampling, channel
multipliers, grouped transposed convolution, pads / output_pad / output size,
activations and dynamic weights."""

from itertools import product

import pytest

from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

PADS = [{}, {4: 1}, {4: 1, 15: 0, 14: 2, 16: 1}, {18: 1}, {4: -233}, {4: -234}]


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
    for i, (k, s, d) in enumerate(product([1, 2, 3, 4, 5], [1, 2, 3], [1, 2])):
        h, w = 3 + i % 4, 4 + i % 3
        pads = dict(PADS[i % len(PADS)])
        if pads.get(4, 0) < 0:  # SAME modes crop to output_w/h, here up to 2 less than the full size
            extent = d * (k - 1) + 1
            pads.update({20: (w - 1) * s + extent - i % 3, 21: (h - 1) * s + extent - (i + 1) % 3})
        cases.append((k, s, d, pads, channels[i % len(channels)], h, w))
    return cases


@pytest.mark.parametrize("k,s,d,pads,c,h,w", _depthwise_grid())
def test_depthwise(k, s, d, pads, c, h, w):
    check_layer("DeconvolutionDepthWise", dw_params(c, c, c, k, extra={2: d, 3: s, **pads}),
                dw_weights(c, c, c, k, seed=k), [rand(c, h, w, seed=s)])


@pytest.mark.parametrize("group,inc,outc", [(2, 4, 4), (3, 12, 6), (4, 8, 16), (3, 3, 12), (8, 8, 24)])
@pytest.mark.parametrize("k,s,pads", [(4, 2, {4: 1}), (3, 1, {}), (3, 2, {18: 1, 4: 1}),
                                      (2, 2, {4: -233, 20: 8, 21: 8})])
def test_grouped(group, inc, outc, k, s, pads):
    check_layer("DeconvolutionDepthWise", dw_params(group, inc, outc, k, extra={3: s, **pads}),
                dw_weights(group, inc, outc, k), [rand(inc, 4, 5)])


@pytest.mark.parametrize("act,act_params", [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None),
                                            (5, None), (6, [0.2, 0.5])])
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {3: 2, 4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer("DeconvolutionDepthWise", dw_params(8, 8, 8, 4, bias=bias, extra=extra),
                dw_weights(8, 8, 8, 4, bias=bias), [rand(8, 5, 6)])


@pytest.mark.parametrize("shape", [(7,), (5, 7), (1, 5, 7)])
def test_single_channel_dims(shape):
    check_layer("DeconvolutionDepthWise", dw_params(1, 1, 2, 3, extra={3: 2}), dw_weights(1, 1, 2, 3),
                [rand(*shape)])


@pytest.mark.parametrize("group,inc,outc,bias", [(4, 4, 4, True), (2, 4, 6, False), (3, 6, 3, True)])
def test_dynamic_weight(group, inc, outc, bias):
    """Weight blob (inc, outc/group, kh, kw), as PyTorch's ConvTranspose2d."""
    inputs = [rand(inc, 5, 6), rand(inc, outc // group, 3, 3, seed=3)] + ([rand(outc, seed=4)] if bias else [])
    check_layer("DeconvolutionDepthWise", {0: outc, 1: 3, 3: 2, 5: int(bias), 7: group, 28: 1, 4: 1}, [], inputs)


@pytest.mark.parametrize("group,inc,outc,bias", [(1, 2, 2, False), (2, 4, 2, True), (8, 8, 8, True),
                                                 (4, 12, 12, False)])
def test_dynamic_weight_without_num_output(group, inc, outc, bias):
    """num_output 0 and no kernel size: the weight blob (inc, outc/group, kh, kw) gives them."""
    inputs = [rand(inc, 7, 15), rand(inc, outc // group, 3, 3, seed=3)] + ([rand(outc, seed=4)] if bias else [])
    check_layer("DeconvolutionDepthWise", {0: 0, 1: 0, 3: 2, 4: 1, 5: int(bias), 6: 0, 7: group, 28: 1}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text("DeconvolutionDepthWise", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(5, 5, 6), (4, 3, 5, 6)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(dw_params(2, 4, 4, 3), dw_weights(2, 4, 4, 3), [rand(*shape)])


def test_group_must_divide_num_output():
    with pytest.raises(ParamError):
        _run({0: 6, 1: 3, 6: 54, 7: 4}, [tagged(rand(54))], [rand(4, 5, 6)])
