"""CumulativeSum against real ncnn: every axis (negative too) of dims 1-4, in a GPU net."""

import pytest

from tests.oracle import check_layer, layer_param_text, needs_gpu, rand, run_vkncnn
from vkncnn.errors import ShapeError

SHAPES = [(9,), (5, 7), (3, 4, 5), (2, 3, 4, 5)]
CASES = [(s, a) for s in SHAPES for a in range(-len(s), len(s))]


@pytest.mark.parametrize("shape,axis", CASES)
def test_matches_ncnn(shape, axis):
    check_layer("CumulativeSum", {0: axis}, [], [rand(*shape, seed=len(shape), lo=-3, hi=3)])


def test_1d_ignores_axis():
    check_layer("CumulativeSum", {0: 3}, [], [rand(33)])


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    check_layer("CumulativeSum", {0: -1}, [], [rand(8, 3, 7)], gpu=True)


@pytest.mark.parametrize("axis", [3, -4])
def test_axis_outside_raises(axis):
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("CumulativeSum", {0: axis}, 1), b"", {"in0": rand(2, 3, 4)}, ["out0"])
