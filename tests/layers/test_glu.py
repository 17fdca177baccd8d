"""GLU against real ncnn: every axis (negative too) of dims 1-4, odd extents, and in a GPU net."""

import pytest

from tests.oracle import check_layer, layer_param_text, needs_gpu, rand, run_vkncnn
from vkncnn.errors import ShapeError

CASES = [((8,), 0), ((14,), -1), ((6, 5), 0), ((6, 5), -2), ((3, 10), 1), ((3, 10), -1),
         ((4, 3, 5), 0), ((4, 3, 5), -3), ((3, 6, 5), 1), ((3, 6, 5), -2), ((3, 5, 12), 2), ((3, 5, 12), -1),
         ((16, 2, 2), 0), ((2, 2, 2), 2),
         ((4, 3, 2, 5), 0), ((3, 4, 2, 5), 1), ((3, 2, 4, 5), -2), ((3, 2, 5, 6), 3),
         # an odd extent: ncnn rounds each half down and the last entry gates nothing
         ((5,), 0), ((3, 5), 1), ((5, 3), 0), ((3, 7, 4), 1), ((3, 4, 9), -1), ((5, 2, 3, 2), 0)]


@pytest.mark.parametrize("shape,axis", CASES)
def test_matches_ncnn(shape, axis):
    check_layer("GLU", {0: axis}, [], [rand(*shape, lo=-5, hi=5)])


def test_default_axis():
    check_layer("GLU", {}, [], [rand(6, 3, 2)])


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    check_layer("GLU", {0: 1}, [], [rand(4, 8, 3)], gpu=True)


@pytest.mark.parametrize("shape,axis", [((4, 4), 2), ((4, 4), -3), ((2, 2, 2, 2), 4)])
def test_bad_shapes_raise(shape, axis):
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("GLU", {0: axis}, 1), b"", {"in0": rand(*shape)}, ["out0"])
