"""Deconvolution3D against real ncnn: weight layout [outc][inc][kd][kh][kw], kernels,
strides, dilations, pads cut after the transposed conv, output_pad per axis,
output_w/h/d with SAME_UPPER/LOWER, bias, activations, errors and a GPU net."""

from itertools import product

import pytest

from tests.layers.conv3d_cases import ACTIVATIONS, params3d, weights3d
from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

TYPE = "Deconvolution3D"
CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 1)]
PADS = [{}, {4: 1}, {4: 1, 14: 0, 24: 2}, {18: 1}, {4: 1, 18: 1, 19: 0, 20: 2}, {4: 0, 15: 1, 14: 2, 16: 0, 17: 1}]


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([(1, 1, 1), (3, 3, 3), (2, 3, 1), (3, 1, 2)], [1, 2, 3], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        cases.append((k, {3: s, 13: 1 + i % 2, 23: s}, {2: d, 12: 1, 22: d}, PADS[i % len(PADS)], inc, outc))
    return cases


@pytest.mark.parametrize("k,stride,dilation,pads,inc,outc", _grid())
def test_kernel_stride_dilation_pads(k, stride, dilation, pads, inc, outc):
    check_layer(TYPE, params3d(outc, inc, k, extra={**stride, **dilation, **pads}), weights3d(outc, inc, k),
                [rand(inc, 3, 4, 5, seed=2)])


@pytest.mark.parametrize("mode", [-233, -234])
@pytest.mark.parametrize("out_whd,output_pad", [((11, 9, 7), 0), ((10, 8, 6), 1), ((12, 9, 7), 2)])
def test_output_size_same_modes(mode, out_whd, output_pad):
    extra = {4: mode, 3: 2, 25: out_whd[0], 26: out_whd[1], 27: out_whd[2], 18: output_pad}
    check_layer(TYPE, params3d(4, 3, (3, 3, 3), extra=extra), weights3d(4, 3, (3, 3, 3)), [rand(3, 3, 4, 5)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {3: 2, 4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, params3d(4, 3, (3, 3, 3), bias=bias, extra=extra), weights3d(4, 3, (3, 3, 3), bias=bias),
                [rand(3, 3, 4, 5)])


@pytest.mark.parametrize("shape,inc", [((3, 4, 5), 3), ((4, 5), 1)])
def test_lower_rank_inputs(shape, inc):
    check_layer(TYPE, params3d(4, inc, (1, 3, 3), extra={3: 2}), weights3d(4, inc, (1, 3, 3)), [rand(*shape)])


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape,extra", [((4, 3, 4, 5), {}), ((3, 3, 4, 5), {25: 30, 4: -233}),
                                         ((3, 3, 4, 5), {25: 5}), ((3, 1, 1, 1), {4: 2})])
def test_bad_inputs_raise(shape, extra):
    with pytest.raises(ShapeError):
        _run(params3d(4, 3, (3, 3, 3), extra=extra), weights3d(4, 3, (3, 3, 3)), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 100}, {0: 4, 1: 3, 6: 324, 20: -1},
                                    {0: 4, 1: 3, 6: 324, 22: 0}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, weights3d(4, 3, (3, 3, 3)), [rand(3, 3, 4, 5)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, params3d(8, 4, (2, 3, 3), extra={3: 2, 4: 1, 9: 1}), weights3d(8, 4, (2, 3, 3)),
                     [rand(4, 3, 4, 5)])


@pytest.mark.parametrize("type_name,params,inputs", [
    (TYPE, {0: 4, 1: 3, 3: 100000, 6: 324}, [rand(3, 3, 4, 5)]),
    ("Convolution3D", {0: 4, 1: 3, 4: 1000, 6: 324}, [rand(3, 3, 4, 5)]),
    ("Deconvolution1D", {0: 4, 1: 3, 3: 1000000000, 6: 36}, [rand(3, 5)]),
    ("ConvolutionDepthWise1D", {0: 4, 1: 3, 4: 2000000000, 6: 12, 7: 4}, [rand(4, 5)]),
    ("Pooling3D", {0: 0, 1: 3, 3: 100000, 5: 1}, [rand(4, 3, 4, 5)]),
    ("Unfold", {1: 3, 4: 100000}, [rand(4, 4, 5)]),
])
def test_absurd_sizes_raise_before_allocating(type_name, params, inputs):
    weights = [tagged(rand(params[6]))] if 6 in params else []
    text = layer_param_text(type_name, params, len(inputs))
    with pytest.raises(ShapeError, match="more than"):
        run_vkncnn(text, bin_bytes(weights), {"in0": inputs[0]}, ["out0"])
