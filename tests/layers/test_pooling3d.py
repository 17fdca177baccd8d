"""Pooling3D against real ncnn: max/avg windows over every pad mode (full with tail
padding, valid, SAME_UPPER/LOWER), per-axis kernels, strides and pads,
count_include_pad, global and adaptive pooling, errors and a GPU net."""

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError

TYPE = "Pooling3D"


@pytest.mark.parametrize("ptype", [0, 1])
@pytest.mark.parametrize("window", [
    {1: 2, 2: 2, 5: 0}, {1: 3, 2: 1, 3: 1, 5: 0}, {1: 3, 2: 2, 3: 1, 14: 0, 5: 0}, {1: 3, 2: 2, 5: 1},
    {1: 3, 2: 2, 5: 2}, {1: 4, 2: 3, 5: 3}, {1: 3, 2: 2, 3: 1, 13: 0, 23: 1, 16: 0, 5: 1},
    {1: 2, 2: 3, 3: 0, 14: 1, 13: 1, 15: 0, 23: 0, 16: 1, 5: 0}, {1: 3, 11: 1, 21: 2, 2: 2, 12: 1, 22: 1, 5: 0}])
@pytest.mark.parametrize("include_pad", [0, 1])
def test_window(ptype, window, include_pad):
    check_layer(TYPE, {0: ptype, 6: include_pad, **window}, [], [rand(3, 5, 6, 7)])


@pytest.mark.parametrize("shape", [(1, 4, 5, 6), (4, 3, 7, 5), (8, 2, 3, 4), (12, 5, 5, 5)])
@pytest.mark.parametrize("ptype", [0, 1])
def test_global(shape, ptype):
    check_layer(TYPE, {0: ptype, 4: 1}, [], [rand(*shape)])


@pytest.mark.parametrize("ptype", [0, 1])
@pytest.mark.parametrize("out", [{8: 1}, {8: 3}, {8: 2, 18: 3, 28: 1}, {8: 5, 18: 4, 28: 3}])
def test_adaptive(ptype, out):
    check_layer(TYPE, {0: ptype, 7: 1, **out}, [], [rand(3, 4, 5, 7)])


def _run(params, x):
    return run_vkncnn(layer_param_text(TYPE, params, 1), b"", {"in0": x}, ["out0"])


@pytest.mark.parametrize("params", [{0: 2, 1: 2}, {0: 0, 1: 2, 5: 4}, {0: 0, 1: 0}, {0: 0, 7: 1, 8: 0},
                                    {0: 0, 1: 2, 3: -1}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, rand(3, 4, 5, 6))


def test_window_larger_than_input_raises():
    with pytest.raises(ShapeError):
        _run({0: 0, 1: 5, 5: 1}, rand(3, 4, 5, 6))


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, {0: 1, 1: 3, 2: 2, 3: 1, 5: 0}, [], [rand(8, 5, 6, 7)])


@pytest.mark.parametrize("ptype", [0, 1])
@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("shape", [(5, 5, 3, 4), (16, 7, 2, 7), (3, 4, 4, 4)])
def test_same_lower_pads_depth_like_ncnn(ptype, include_pad, shape):
    """ncnn's SAME_LOWER puts the odd pad after on depth, before on h and w (found by
    tools/dev/layerfuzz: vkncnn put it before on all three axes)."""
    check_layer(TYPE, {0: ptype, 1: 2, 2: 1, 5: 3, 6: include_pad}, [], [rand(*shape)])
