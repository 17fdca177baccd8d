"""DeconvolutionDepthWise1D against real ncnn: weight layout [g][outc/g][inc/g][kw],
depthwise and grouped transposed 1-D convolutions over strides, dilations, pads,
output_pad_right and output_w, bias, activations, dynamic weights, errors and a GPU net;
then the GPU path (fp32 and fp16 storage, pack1 and pack4) against ncnn with the numpy
forward refused."""

from itertools import product

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.layers.gpu_oracle import check_gpu_vs_ncnn
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.layer import create_layer
from vkncnn.layers.deconvolutiondepthwise1d import DeconvolutionDepthWise1D

TYPE = "DeconvolutionDepthWise1D"
GROUPS = [(3, 3, 3), (4, 8, 4), (8, 8, 8), (12, 12, 12), (4, 6, 2), (12, 8, 4), (1, 1, 1)]
PADS = [{}, {4: 1}, {4: 2, 15: 0}, {18: 1}, {4: -233, 20: 14}, {4: -234, 20: 9, 18: 1}]


def dd1_params(outc, inc, k, group, bias=True, extra=None):
    return {0: outc, 1: k, 5: int(bias), 6: outc * (inc // group) * k, 7: group, **(extra or {})}


def dd1_weights(outc, inc, k, group, bias=True, seed=0):
    w = [tagged(rand(outc, inc // group, k, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 4], [1, 2, 3], [1, 2])):
        inc, outc, g = GROUPS[i % len(GROUPS)]
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, g, 6 + i % 5))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,g,w", _grid())
def test_kernel_stride_dilation_pads_groups(k, s, d, pads, inc, outc, g, w):
    params = dd1_params(outc, inc, k, g, extra={2: d, 3: s, **pads})
    full = (w - 1) * s + d * (k - 1) + 1 + pads.get(18, 0)
    if pads.get(20, 0) > full:
        params[20] = full
    check_layer(TYPE, params, dd1_weights(outc, inc, k, g, seed=k), [rand(inc, w, seed=s)])


@pytest.mark.parametrize("act,act_params", [(1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None),
                                            (6, [0.2, 0.5])])
def test_activation(act, act_params):
    extra = {3: 2, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, dd1_params(6, 6, 3, 6, extra=extra), dd1_weights(6, 6, 3, 6), [rand(6, 9)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("group", [2, 4])
def test_dynamic_weight(bias, group):
    inputs = [rand(4, 9), rand(4, 8 // group, 3, seed=5)] + ([rand(8, seed=6)] if bias else [])
    check_layer(TYPE, {0: 8, 1: 3, 3: 2, 5: int(bias), 7: group, 28: 1}, [], inputs)


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


def test_bad_channels_raise():
    with pytest.raises(ShapeError):
        _run(dd1_params(4, 4, 3, 4), dd1_weights(4, 4, 3, 4), [rand(6, 9)])


@pytest.mark.parametrize("params", [{0: 6, 1: 3, 6: 18, 7: 4}, {0: 4, 1: 3, 6: 12, 7: 0}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, dd1_weights(4, 4, 3, 4), [rand(4, 9)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, dd1_params(12, 12, 4, 12, extra={3: 2, 4: 1}), dd1_weights(12, 12, 4, 12),
                     [rand(12, 10)])


# -- GPU path against ncnn (numpy forward refused) ---------------------------------------------
# (input channels, output channels, group): depthwise, channel multipliers and small groups
# (the direct GROUPED loop, e.g. 2 -> 1 upsampling), and groups of >= 16 outputs (the product)
GPU_GROUPS = [(1, 1, 1), (3, 3, 3), (4, 4, 4), (8, 8, 8), (12, 12, 12), (16, 16, 16), (4, 8, 4), (16, 8, 8),
              (12, 8, 4), (16, 16, 2), (16, 32, 2), (8, 16, 1), (12, 24, 3)]
GPU_PADS = [{}, {4: 1}, {4: 2, 15: 0}, {18: 1}, {4: 1, 18: 2}, {4: 0, 15: 1}, {4: -233, 20: 0},
            {4: -234, 20: 0, 18: 1}]
ACTS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]


def _gpu_grid(n=52):
    """n cases, each param cycling at its own period so that every value meets many others;
    an output_w of 0 becomes the full output length less 0-3."""
    cases = []
    for i in range(n):
        k, s, d = (1, 2, 3, 4)[i % 4], (1, 2, 3)[i // 4 % 3], (1, 2)[i // 12 % 2]
        act, act_params = ACTS[i % 7]
        extra = {2: d, 3: s, 9: act, **GPU_PADS[i % len(GPU_PADS)], **({10: act_params} if act_params else {})}
        w = 2 + (i * 5) % 9
        if 20 in extra:
            full = (w - 1) * s + d * (k - 1) + 1 + extra.get(18, 0)
            extra[20] = max(1, full - i % 4)
        cases.append((k, extra, *GPU_GROUPS[i % len(GPU_GROUPS)], i % 3 != 0, w))
    return cases


@needs_gpu
@pytest.mark.parametrize("k,extra,inc,outc,g,bias,w", _gpu_grid())
def test_gpu_grid(monkeypatch, k, extra, inc, outc, g, bias, w):
    check_gpu_vs_ncnn(monkeypatch, DeconvolutionDepthWise1D, TYPE, dd1_params(outc, inc, k, g, bias, extra),
                      dd1_weights(outc, inc, k, g, bias, seed=k), [rand(inc, w, seed=w)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,g,shape", [(1, 1, 1, (9,)), (1, 2, 1, (1, 9)), (8, 8, 8, (1, 8, 9)),
                                              (8, 4, 4, (1, 8, 9))])
def test_gpu_input_dims(monkeypatch, inc, outc, g, shape):
    """(1, h, w) is read as (h, w), also where the depthwise shader repacks it to pack4."""
    check_gpu_vs_ncnn(monkeypatch, DeconvolutionDepthWise1D, TYPE, dd1_params(outc, inc, 3, g, extra={3: 2}),
                      dd1_weights(outc, inc, 3, g), [rand(*shape)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,g,extra", [(12, 12, 12, {3: 2, 4: 1}), (16, 8, 8, {3: 2, 4: 1, 9: 1}),
                                              (16, 32, 2, {4: -233, 3: 2, 20: 20, 9: 2, 10: [0.1]})])
def test_gpu_in_net(monkeypatch, inc, outc, g, extra):
    """Input from a GPU layer (pack4 where its rows allow), output into another."""
    check_gpu_vs_ncnn(monkeypatch, DeconvolutionDepthWise1D, TYPE, dd1_params(outc, inc, 4, g, extra=extra),
                      dd1_weights(outc, inc, 4, g), [rand(inc, 10)], in_net=True)


def test_dynamic_weight_stays_on_numpy():
    layer = create_layer(TYPE)
    pd = ParamDict()
    for key, value in {0: 8, 1: 3, 7: 2, 28: 1}.items():
        pd.set(key, value)
    layer.load_param(pd)
    assert not layer.support_vulkan
