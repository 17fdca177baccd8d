"""Flip against real ncnn: every axis subset (negative too) of dims 1-4, no axes, GPU net."""

from itertools import combinations

import pytest

from tests.oracle import check_layer, layer_param_text, needs_gpu, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError

SHAPES = [(9,), (5, 7), (3, 4, 5), (2, 3, 4, 5)]
CASES = [(s, list(axes)) for s in SHAPES for n in range(1, len(s) + 1) for axes in combinations(range(len(s)), n)]


@pytest.mark.parametrize("shape,axes", CASES)
def test_matches_ncnn(shape, axes):
    check_layer("Flip", {0: axes}, [], [rand(*shape, seed=len(axes))])


@pytest.mark.parametrize("shape,axes", [((5, 7), [-1]), ((3, 4, 5), [-3, -1]), ((2, 3, 4, 5), [-2, 0])])
def test_negative_axes(shape, axes):
    check_layer("Flip", {0: axes}, [], [rand(*shape)])


def test_no_axes_passes_through():
    check_layer("Flip", {}, [], [rand(3, 4, 5)])


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    check_layer("Flip", {0: [0, 2]}, [], [rand(8, 3, 7)], gpu=True)


def test_bad_axes_raise():
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Flip", {0: [2]}, 1), b"", {"in0": rand(3, 4)}, ["out0"])
    with pytest.raises(ParamError):
        run_vkncnn(layer_param_text("Flip", {0: [0, 1, 2, 3, 0]}, 1), b"", {"in0": rand(3, 4)}, ["out0"])
