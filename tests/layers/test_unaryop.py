import numpy as np
import pytest

from tests.oracle import check_layer, rand
from vkncnn.errors import Error

SHAPES = [(7,), (5, 13), (3, 6, 7), (16, 3, 5), (4, 3, 2, 5)]
OPS = range(28)  # abs .. trunc (0-19), sign, expm1, sinh, asinh, cosh, acosh, atanh, log1p
TRIG = (9, 10, 11)
# domain edges where ncnn's vectorised math has a definite answer we copy:
# log(0) = nan, 1/0 = nan, rsqrt(0) = nan, exp(+inf) = 2.4e38, atan(inf) = nan, ...
EDGES = np.array([0, -0.0, 1, -1, 100, -100, 88.5, -88.5, 1e30, -1e30, 0.5, -0.5, 2.5, 1e-40,
                  np.inf, -np.inf], np.float32)


def with_edges(shape, op, seed=0):
    x = rand(*shape, seed=seed, lo=-3, hi=3)
    edges = EDGES
    if op in TRIG:
        # sin/cos/tan of 1e30 is argument-reduction noise in ncnn; no answer to copy
        edges = edges[np.abs(edges) < 1e7]
    n = min(x.size, edges.size)
    x.ravel()[:n] = edges[:n]
    return x


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_unaryop_matches_ncnn(shape, op):
    # the edge values fill the first 16 elements, random values in [-3, 3] the rest
    check_layer("UnaryOp", {0: op}, [], [with_edges(shape, op)])


@pytest.mark.parametrize("op", [5, 6, 7, 8, 15, 17, 21, 22, 24, 25, 27])
def test_unaryop_wide_range(op):
    # positive and huge arguments: exp saturation, log of big numbers, sqrt of large
    check_layer("UnaryOp", {0: op}, [], [rand(4, 5, 8, lo=-120, hi=120)])
    check_layer("UnaryOp", {0: op}, [], [rand(4, 5, 8, lo=1e-6, hi=1e6)])


def test_unaryop_round_is_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5], np.float32)
    check_layer("UnaryOp", {0: 18}, [], [x], tol=0)


def test_unaryop_unknown_op_is_rejected():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    pd = ParamDict()
    pd.set(0, 28)
    with pytest.raises(Error):
        create_layer("UnaryOp").load_param(pd)


def test_unaryop_leaves_input_untouched():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("UnaryOp")
    pd = ParamDict()
    pd.set(0, 1)
    layer.load_param(pd)
    x = rand(3, 4, 5)
    before = x.copy()
    y = layer.forward_cpu([x], None)[0]
    assert np.array_equal(x, before) and np.array_equal(y, -before)
