"""Convolution3D against real ncnn: kernels, strides, dilations per axis, pads (explicit per
side, SAME_UPPER/LOWER) with pad_value, bias, activations, lower-rank inputs, errors
and a GPU net."""

from itertools import product

import pytest

from tests.layers.conv3d_cases import ACTIVATIONS, params3d, weights3d
from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError

TYPE = "Convolution3D"
CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 1)]
PADS = [{}, {4: 1}, {4: 1, 14: 0, 24: 2}, {4: -233, 18: 0.5}, {4: -234},
        {4: 0, 15: 1, 14: 2, 16: 0, 24: 0, 17: 1, 18: -0.4}]


def _grid():
    cases = []
    for i, (k, s, d) in enumerate(product([(1, 1, 1), (3, 3, 3), (2, 3, 1), (3, 1, 2)], [1, 2], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        stride = {3: s, 13: 1 + (i % 2), 23: s}
        dilation = {2: d, 22: 1}
        cases.append((k, stride, dilation, PADS[i % len(PADS)], inc, outc, (5 + i % 3, 6, 7 - i % 2)))
    return cases


@pytest.mark.parametrize("k,stride,dilation,pads,inc,outc,dhw", _grid())
def test_kernel_stride_dilation_pads(k, stride, dilation, pads, inc, outc, dhw):
    check_layer(TYPE, params3d(outc, inc, k, extra={**stride, **dilation, **pads}), weights3d(outc, inc, k),
                [rand(inc, *dhw, seed=3)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {4: 1, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, params3d(4, 3, (3, 3, 3), bias=bias, extra=extra), weights3d(4, 3, (3, 3, 3), bias=bias),
                [rand(3, 4, 5, 6)])


@pytest.mark.parametrize("shape,inc", [((3, 6, 7), 3), ((6, 7), 1), ((7,), 1)])
def test_lower_rank_inputs(shape, inc):
    # a (c, h, w) blob is one slice deep (unpadded: ncnn computes garbage for padded 3-D blobs)
    kernel = (1, 3, 3) if len(shape) > 1 else (1, 1, 3)
    check_layer(TYPE, params3d(4, inc, kernel), weights3d(4, inc, kernel), [rand(*shape)])


def test_padded_3d_blob_is_one_slice_deep():
    # ncnn reads a padded 3-D blob wrongly; vkncnn gives what ncnn gives for the same data as 4-D
    x = rand(3, 6, 7)
    params, weights = params3d(4, 3, (3, 3, 3), extra={4: 1}), weights3d(4, 3, (3, 3, 3))
    text = layer_param_text(TYPE, params, 1)
    as_3d = run_vkncnn(text, bin_bytes(weights), {"in0": x}, ["out0"])["out0"]
    as_4d = check_layer(TYPE, params, weights, [x[:, None]])
    assert as_4d <= 1e-4 and as_3d.shape == (4, 1, 6, 7)
    assert (run_vkncnn(text, bin_bytes(weights), {"in0": x[:, None]}, ["out0"])["out0"] == as_3d).all()


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(4, 4, 5, 6), (3, 2, 2, 2)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(params3d(4, 3, (3, 3, 3)), weights3d(4, 3, (3, 3, 3)), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 100}, {0: 4, 1: 3, 6: 324, 23: 0},
                                    {0: 4, 1: 3, 6: 324, 4: -233, 24: 1}, {0: 0, 1: 3, 6: 324},
                                    {0: 4, 1: 3, 6: 324, 9: 7}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, weights3d(4, 3, (3, 3, 3)), [rand(3, 4, 5, 6)])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, params3d(8, 4, (3, 3, 3), extra={4: 1, 3: 2, 9: 1}), weights3d(8, 4, (3, 3, 3)),
                     [rand(4, 5, 6, 7)])


@pytest.mark.parametrize("kernel,stride,dhw", [
    ((2, 1, 2), (1, 2, 2), (2, 4, 6)),   # SAME crops h (-1) while d pads
    ((1, 2, 1), (2, 1, 2), (6, 3, 4)),   # crops w and d while h pads
    ((1, 1, 2), (2, 2, 1), (5, 4, 3)),
    ((2, 2, 2), (1, 1, 1), (3, 4, 5))])  # odd amount on every axis
@pytest.mark.parametrize("mode", [-233, -234])
def test_same_pads_match_ncnn_quirks(kernel, stride, dhw, mode):
    """ncnn's SAME_LOWER puts depth's odd pad after, and its 3-D border crops a negative
    amount before d or h at the end (found by tools/dev/layerfuzz: vkncnn differed)."""
    sd, sh, sw = stride
    extra = {4: mode, 3: sw, 13: sh, 23: sd}
    check_layer(TYPE, params3d(3, 3, kernel, extra=extra), weights3d(3, 3, kernel), [rand(3, *dhw)])
