"""ConvolutionDepthWise1D against real ncnn: groups (depthwise and grouped), kernels,
strides, dilations, pads (explicit, asymmetric, SAME_UPPER/LOWER) with pad_value, bias,
activations, 1-D input, dynamic weights, errors and a GPU net; then the GPU path (fp32 and
fp16 storage, pack1 and pack4) against ncnn with the numpy forward refused."""

from itertools import product

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.layers.gpu_oracle import check_gpu_vs_ncnn
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, rel_err, run_ncnn, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError
from vkncnn.format.paramdict import ParamDict
from vkncnn.layer import create_layer
from vkncnn.layers.convolutiondepthwise1d import ConvolutionDepthWise1D

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


def longer_blob(outc, inc, k, group):
    """Params and weights whose blob holds kernel_w times the weights the input needs, as
    ncnn's own test writes them (kernel_w squared per filter row)."""
    size = outc * (inc // group) * k * k
    return {**dw1_params(outc, inc, k, group), 6: size}, [tagged(rand(size)), raw(rand(outc, seed=1))]


@pytest.mark.parametrize("inc,outc,g", [(2, 2, 2), (4, 2, 2), (8, 8, 2), (3, 6, 1)])
def test_weight_blob_longer_than_the_input_needs(inc, outc, g):
    """ncnn sizes the groups from the input's channels and reads the head of the weights."""
    params, weights = longer_blob(outc, inc, 3, g)
    check_layer(TYPE, params, weights, [rand(inc, 13)])


def test_weight_blob_shorter_than_the_input_needs_raises():
    with pytest.raises(ShapeError):
        _run(dw1_params(4, 4, 3, 4), dw1_weights(4, 4, 3, 4), [rand(8, 12)])


@pytest.mark.parametrize("params", [{0: 6, 1: 3, 6: 18, 7: 4}, {0: 4, 1: 3, 6: 13, 7: 4},
                                    {0: 4, 1: 3, 6: 12, 7: 4, 4: -233, 15: 1}, {0: 4, 1: 3, 6: 12, 7: 4, 9: 9}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, dw1_weights(4, 4, 3, 4), [rand(4, 12)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, dw1_params(12, 12, 3, 12, extra={4: 1, 9: 1}), dw1_weights(12, 12, 3, 12), [rand(12, 17)])


# -- GPU path against ncnn (numpy forward refused) ---------------------------------------------
# (input channels, output channels, group): depthwise, channel multipliers and small groups
# (the direct GROUPED loop), and groups of >= 16 outputs or one group (the matrix product)
GPU_GROUPS = [(1, 1, 1), (3, 3, 3), (4, 4, 4), (8, 8, 8), (12, 12, 12), (16, 16, 16), (4, 8, 4), (8, 4, 2),
              (12, 8, 4), (16, 16, 2), (16, 32, 2), (3, 6, 1), (16, 12, 1), (12, 24, 3)]
GPU_PADS = [{}, {4: 1}, {4: 2, 15: 0}, {4: -233, 18: 0.5}, {4: -234}, {4: 0, 15: 3, 18: -0.7}, {4: 1, 18: 0.3}]
ACTS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]


def _gpu_grid(n=56):
    """n cases, each param cycling at its own period so that every value meets many others."""
    cases = []
    for i in range(n):
        k, s, d = (1, 2, 3, 5)[i % 4], (1, 2, 3)[i // 4 % 3], (1, 2)[i // 12 % 2]
        act, act_params = ACTS[i % 7]
        extra = {2: d, 3: s, 9: act, **GPU_PADS[i % len(GPU_PADS)], **({10: act_params} if act_params else {})}
        inc, outc, g = GPU_GROUPS[i % len(GPU_GROUPS)]
        cases.append((k, extra, inc, outc, g, i % 3 != 0, d * (k - 1) + 1 + (i * 5) % 9))
    return cases


@needs_gpu
@pytest.mark.parametrize("k,extra,inc,outc,g,bias,w", _gpu_grid())
def test_gpu_grid(monkeypatch, k, extra, inc, outc, g, bias, w):
    check_gpu_vs_ncnn(monkeypatch, ConvolutionDepthWise1D, TYPE, dw1_params(outc, inc, k, g, bias, extra),
                      dw1_weights(outc, inc, k, g, bias, seed=k), [rand(inc, w, seed=w)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,g", [(2, 2, 2), (8, 8, 2), (3, 6, 1)])
def test_gpu_weight_blob_longer_than_the_input_needs(inc, outc, g):
    """The uploaded weights are laid out for the blob's channel count: a GPU net runs this
    layer on the CPU (with a warning), which reads the head of the blob as ncnn does."""
    params, weights = longer_blob(outc, inc, 3, g)
    text, wb = layer_param_text(TYPE, params, 1), bin_bytes(weights)
    feed = {"in0": rand(inc, 13)}
    want = run_ncnn(text, wb, feed, ["out0"])["out0"]
    with pytest.warns(RuntimeWarning, match="laid out for"):
        got = run_vkncnn(text, wb, feed, ["out0"], gpu=True, fp16=False)["out0"]
    assert rel_err(got, want) <= 1e-4


@needs_gpu
@pytest.mark.parametrize("inc,outc,g,shape", [(1, 3, 1, (11,)), (1, 1, 1, (11,)), (1, 4, 1, (1, 11)),
                                              (1, 3, 1, (1, 1, 11)), (8, 8, 8, (1, 8, 11)),
                                              (8, 16, 4, (1, 8, 11)), (4, 16, 1, (1, 4, 11))])
def test_gpu_input_dims(monkeypatch, inc, outc, g, shape):
    """1-D input is one channel; (1, h, w) is read as (h, w), also where the depthwise
    shader repacks it to the output's pack4."""
    check_gpu_vs_ncnn(monkeypatch, ConvolutionDepthWise1D, TYPE, dw1_params(outc, inc, 3, g, extra={4: 1}),
                      dw1_weights(outc, inc, 3, g), [rand(*shape)])


@needs_gpu
@pytest.mark.parametrize("inc,outc,g,extra", [(12, 12, 12, {4: 1, 9: 1}), (16, 8, 4, {3: 2, 4: -233, 18: 0.5}),
                                              (16, 32, 2, {2: 2, 4: 2, 9: 5}), (8, 16, 1, {4: -234, 3: 2})])
def test_gpu_in_net(monkeypatch, inc, outc, g, extra):
    """Input from a GPU layer (pack4 where its rows allow), output into another."""
    check_gpu_vs_ncnn(monkeypatch, ConvolutionDepthWise1D, TYPE, dw1_params(outc, inc, 3, g, extra=extra),
                      dw1_weights(outc, inc, 3, g), [rand(inc, 17)], in_net=True)


def test_dynamic_weight_stays_on_numpy():
    layer = create_layer(TYPE)
    pd = ParamDict()
    for key, value in {0: 8, 1: 3, 7: 2, 19: 1}.items():
        pd.set(key, value)
    layer.load_param(pd)
    assert not layer.support_vulkan


@needs_gpu
@pytest.mark.parametrize("parallel,direct", [(2, True), (1024, True), (1024, False)])
@pytest.mark.parametrize("inc,outc,g,extra", [(16, 32, 2, {4: 1, 9: 1}), (8, 16, 1, {3: 2, 4: -233, 18: 0.5}),
                                              (128, 64, 2, {2: 2, 4: 2, 9: 2, 10: [0.1]})])
def test_gpu_kernels_of_discrete_gpus(monkeypatch, parallel, direct, inc, outc, g, extra):
    """What a discrete GPU records for the matrix-product groups, forced here on a CPU device:
    convolution_direct.comp (pack4 in and out; `parallel` 2 gives 4 pixels per invocation,
    1024 splits K) or the tiled kernel with split-K partial sums."""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: parallel)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", (1 << 40) if direct else 0)
    check_gpu_vs_ncnn(monkeypatch, ConvolutionDepthWise1D, TYPE, dw1_params(outc, inc, 3, g, extra=extra),
                      dw1_weights(outc, inc, 3, g), [rand(inc, 19)])


@needs_gpu
@pytest.mark.parametrize("shape,extra", [((6, 12), {}), ((4, 2, 12), {}), ((4, 5), {4: 2000000000})])
def test_gpu_bad_inputs_raise(shape, extra):
    """The GPU path refuses what the numpy path refuses, before allocating an absurd output."""
    text = layer_param_text(TYPE, dw1_params(4, 4, 3, 4, extra=extra), 1)
    with pytest.raises(ShapeError):
        run_vkncnn(text, bin_bytes(dw1_weights(4, 4, 3, 4)), {"in0": rand(*shape)}, ["out0"], gpu=True)
