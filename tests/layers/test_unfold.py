"""Unfold (im2col) against real ncnn: kernels, strides, dilations per axis, pads (explicit,
asymmetric, SAME_UPPER/LOWER) with pad_value, input ranks, errors and a GPU net."""

import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError


@pytest.mark.parametrize("params", [
    {1: 1}, {1: 3}, {1: 3, 11: 2, 3: 2, 13: 1}, {1: 2, 2: 2, 12: 1}, {1: 3, 4: 1, 18: 0.5},
    {1: 2, 4: 0, 15: 1, 14: 2, 16: 0, 18: -1.5}, {1: 3, 4: -233, 3: 2}, {1: 2, 4: -234, 3: 3, 18: 0.25},
    {1: 3, 11: 1, 2: 1, 12: 2, 3: 1, 13: 3, 4: 1}])
@pytest.mark.parametrize("channels", [1, 3, 8])
def test_windows(params, channels):
    check_layer("Unfold", params, [], [rand(channels, 7, 8)])


@pytest.mark.parametrize("shape", [(7, 8), (1, 7, 8), (4, 1, 7, 8)])
def test_input_ranks(shape):
    check_layer("Unfold", {1: 3, 3: 2}, [], [rand(*shape)])


def test_bad_params_and_inputs_raise():
    with pytest.raises(ParamError):
        run_vkncnn(layer_param_text("Unfold", {1: 0}, 1), b"", {"in0": rand(3, 7, 8)}, ["out0"])
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Unfold", {1: 9}, 1), b"", {"in0": rand(3, 7, 8)}, ["out0"])
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Unfold", {1: 2}, 1), b"", {"in0": rand(3, 2, 7, 8)}, ["out0"])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net("Unfold", {1: 3, 3: 2, 4: 1}, [], [rand(4, 9, 10)])
