"""ArgMax: the ncnn pip wheel is built without it (ArgMax is OFF in ncnn's default build,
`ncnn.create_layer("ArgMax")` returns None), so these tests check against values worked
out by hand and by an independent sort, following ncnn's source: flat indices of the
topk largest values, largest first, equal values larger index first."""

import numpy as np
import pytest

from tests.oracle import layer_param_text, needs_gpu, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError


def argmax(params, x, gpu=False):
    return run_vkncnn(layer_param_text("ArgMax", params, 1), b"", {"in0": x}, ["out0"], gpu=gpu)["out0"]


def test_hand_worked():
    x = np.array([[0.5, 3.0, -1.0], [3.0, 2.0, 0.0]], np.float32)
    assert np.array_equal(argmax({}, x), [[3.0]])                  # tie at 3.0: the larger index
    assert np.array_equal(argmax({1: 3}, x), [[3.0, 1.0, 4.0]])
    assert np.array_equal(argmax({0: 1, 1: 2}, x), [[3.0, 3.0], [3.0, 1.0]])


@pytest.mark.parametrize("out_max_val", [0, 1])
@pytest.mark.parametrize("topk", [1, 4, 60])
@pytest.mark.parametrize("shape", [(60,), (6, 10), (3, 4, 5), (2, 3, 2, 5)])
def test_against_sort(shape, topk, out_max_val):
    x = rand(*shape, seed=topk)
    order = np.argsort(-x.ravel(), kind="stable")[:topk]   # random values: no ties
    got = argmax({0: out_max_val, 1: topk}, x)
    if out_max_val:
        assert got.shape == (2, topk)
        assert np.array_equal(got[0], x.ravel()[order]) and np.array_equal(got[1], order)
    else:
        assert got.shape == (1, topk) and np.array_equal(got[0], order)


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    x = rand(4, 5, 6)
    assert np.array_equal(argmax({0: 1, 1: 5}, x, gpu=True), argmax({0: 1, 1: 5}, x))


def test_bad_topk_raises():
    with pytest.raises(ShapeError):
        argmax({1: 7}, rand(2, 3))
    with pytest.raises(ParamError):
        argmax({1: 0}, rand(2, 3))
