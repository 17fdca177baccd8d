import pytest

from tests.oracle import check_layer, layer_param_text, rand, run_ncnn
from vkncnn.errors import Error

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_every_axis(shape):
    x = rand(*shape, lo=-8, hi=8)
    for axis in range(-len(shape), len(shape)):
        check_layer("Softmax", {0: axis, 1: 1}, [], [x])


@pytest.mark.parametrize("shape", [(7,), (5, 13), (3, 6, 7), (4, 3, 2, 5)])
def test_softmax_axis0_without_fixbug0(shape):
    check_layer("Softmax", {0: 0}, [], [rand(*shape)])
    check_layer("Softmax", {}, [], [rand(*shape)])


def test_softmax_large_values_are_stable():
    x = rand(4, 3, 8, lo=-300, hi=300)
    check_layer("Softmax", {0: 2, 1: 1}, [], [x])


def test_softmax_1d_ignores_axis():
    check_layer("Softmax", {0: 2, 1: 1}, [], [rand(9)])


@pytest.mark.parametrize("shape,axis", [((5, 13), 2), ((3, 6, 7), 3), ((3, 6, 7), -4), ((4, 3, 2, 5), 4)])
def test_softmax_axis_beyond_dims_leaves_blob_unchanged(shape, axis):
    # ncnn does nothing for an axis the blob does not have
    check_layer("Softmax", {0: axis, 1: 1}, [], [rand(*shape)])


def test_softmax_old_param_is_rejected_like_ncnn():
    text = layer_param_text("Softmax", {0: 1}, 1)
    with pytest.raises(AssertionError):
        run_ncnn(text, b"", {"in0": rand(3, 4)}, ["out0"])
    import vkncnn

    net = vkncnn.Net()
    with pytest.raises(Error):
        net.load_param_mem(text)
