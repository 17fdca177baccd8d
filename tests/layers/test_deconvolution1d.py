"""Deconvolution1D against real ncnn: weight layout [outc][inc][kw], kernels, strides,
dilations, pads cut after the transposed conv, output_pad_right, output_w with
SAME_UPPER/LOWER, bias, activations, 1-D input, dynamic weights (PyTorch
ConvTranspose1d layout), errors and a GPU net; then the GPU path (fp32 and fp16 storage,
pack1 and pack4) against ncnn with the numpy forward refused."""

from itertools import product

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.layers.gpu_oracle import check_gpu_vs_ncnn
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.layer import create_layer
from vkncnn.layers.deconvolution1d import Deconvolution1D

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


# -- GPU path against ncnn (numpy forward refused) ---------------------------------------------
GPU_CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 1), (3, 3), (16, 16), (16, 4), (4, 16), (12, 12)]
# the pads cut from the full output: explicit ones, or output_w (set per case) with SAME
GPU_PADS = [{}, {4: 1}, {4: 2, 15: 0}, {18: 1}, {4: 1, 18: 2}, {4: 0, 15: 1}, {4: -233, 20: 0},
            {4: -234, 20: 0, 18: 1}]
ACTS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]


def gpu_grid(channels, n):
    """n cases, each param cycling at its own period so that every value meets many others;
    an output_w of 0 becomes the full output length less 0-3."""
    cases = []
    for i in range(n):
        k, s, d = (1, 2, 3, 4, 5)[i % 5], (1, 2, 3)[i // 5 % 3], (1, 2)[i // 15 % 2]
        act, act_params = ACTS[i % 7]
        extra = {2: d, 3: s, 9: act, **GPU_PADS[i % len(GPU_PADS)], **({10: act_params} if act_params else {})}
        w = 2 + (i * 5) % 9
        if 20 in extra:
            full = (w - 1) * s + d * (k - 1) + 1 + extra.get(18, 0)
            extra[20] = max(1, full - i % 4)
        cases.append((k, extra, *channels[i % len(channels)], i % 3 != 0, w))
    return cases


@needs_gpu
@pytest.mark.parametrize("k,extra,inc,outc,bias,w", gpu_grid(GPU_CHANNELS, 48))
def test_gpu_grid(monkeypatch, k, extra, inc, outc, bias, w):
    check_gpu_vs_ncnn(monkeypatch, Deconvolution1D, TYPE, d1_params(outc, inc, k, bias, extra),
                      d1_weights(outc, inc, k, bias, seed=k), [rand(inc, w, seed=w)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,shape", [(1, 4, (7,)), (1, 1, (7,)), (1, 3, (1, 7)), (1, 8, (1, 1, 7)),
                                            (8, 4, (1, 8, 7)), (4, 16, (1, 4, 7))])
def test_gpu_input_dims(monkeypatch, inc, outc, shape):
    check_gpu_vs_ncnn(monkeypatch, Deconvolution1D, TYPE, d1_params(outc, inc, 3, extra={3: 2}),
                      d1_weights(outc, inc, 3), [rand(*shape)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,extra", [(8, 8, {3: 2, 4: 1, 9: 2, 10: [0.1]}), (16, 4, {3: 2, 18: 1}),
                                            (4, 12, {4: -234, 3: 2, 20: 30, 9: 1})])
def test_gpu_in_net(monkeypatch, inc, outc, extra):
    """Input from a GPU layer (pack4 where its rows allow), output into another."""
    check_gpu_vs_ncnn(monkeypatch, Deconvolution1D, TYPE, d1_params(outc, inc, 3, extra=extra),
                      d1_weights(outc, inc, 3), [rand(inc, 15)], in_net=True)


def test_dynamic_weight_stays_on_numpy():
    layer = create_layer(TYPE)
    pd = ParamDict()
    for key, value in {0: 5, 1: 4, 28: 1}.items():
        pd.set(key, value)
    layer.load_param(pd)
    assert not layer.support_vulkan


@needs_gpu
@pytest.mark.parametrize("inc,outc,extra", [(64, 16, {3: 2, 4: 1, 9: 1}), (32, 8, {4: -233, 3: 2, 20: 20})])
def test_gpu_split_k(monkeypatch, inc, outc, extra):
    """The tiles and split-K (partial sums + convolution_reduce.comp) a discrete GPU gets,
    forced here on a CPU device."""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    check_gpu_vs_ncnn(monkeypatch, Deconvolution1D, TYPE, d1_params(outc, inc, 3, extra=extra),
                      d1_weights(outc, inc, 3), [rand(inc, 11)])


@needs_gpu
@pytest.mark.parametrize("shape,extra", [((4, 9), {}), ((3, 2, 9), {}), ((3, 9), {20: 30, 4: -233}),
                                         ((3, 9), {20: 10}), ((3, 5), {3: 1000000000})])
def test_gpu_bad_inputs_raise(shape, extra):
    """The GPU path refuses what the numpy path refuses, before allocating an absurd output."""
    text = layer_param_text(TYPE, d1_params(4, 3, 3, extra=extra), 1)
    with pytest.raises(ShapeError):
        run_vkncnn(text, bin_bytes(d1_weights(4, 3, 3)), {"in0": rand(*shape)}, ["out0"], gpu=True)


@pytest.mark.parametrize("type_name,group,inc,outc", [
    ("Deconvolution1D", 1, 4, 3), ("DeconvolutionDepthWise1D", 4, 4, 4), ("DeconvolutionDepthWise1D", 2, 4, 6)])
def test_dynamic_weight_without_num_output(type_name, group, inc, outc):
    """num_output 0 and no kernel size: the weight blob (inc, outc/group, kw) gives them."""
    params = {0: 0, 1: 0, 3: 2, 5: 1, 6: 0, 28: 1, **({7: group} if group > 1 else {})}
    check_layer(type_name, params, [], [rand(inc, 9), rand(inc, outc // group, 3, seed=2), rand(outc, seed=3)])
