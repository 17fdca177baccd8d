import itertools

import numpy as np
import pytest

from tests.oracle import check_layer, layer_outputs, layer_param_text, rand, rel_err, run_ncnn
from vkncnn.errors import Error

OPS = range(11)  # sum asum sumsq mean max min prod l1 l2 logsum logsumexp
POSITIVE_ONLY = (9,)  # logsum of a negative sum is nan
SHAPES = [(7,), (5, 13), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5)]


def data(shape, op, seed=0):
    if op in POSITIVE_ONLY:
        return rand(*shape, seed=seed, lo=0.1, hi=1.5)
    if op == 6:  # keep products of ~100 values in range
        return rand(*shape, seed=seed, lo=0.8, hi=1.2)
    return rand(*shape, seed=seed, lo=-1.5, hi=1.5)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_reduction_reduce_all(shape, op):
    x = data(shape, op)
    check_layer("Reduction", {0: op, 1: 1, 4: 0}, [], [x])
    check_layer("Reduction", {0: op, 1: 1, 2: -0.7, 4: 1}, [], [x])


AXES_CASES = [(shape, axes) for shape in [(5, 13), (3, 6, 7), (4, 3, 2, 5)]
              for r in range(1, len(shape) + 1) for axes in itertools.combinations(range(len(shape)), r)]


@pytest.mark.parametrize("shape,axes", AXES_CASES, ids=[f"{s}-{a}" for s, a in AXES_CASES])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduction_axes(shape, axes, keepdims):
    # every subset of axes; the op varies with the case so each op meets several layouts
    op = (sum(axes) * 3 + len(axes) + keepdims) % 11
    x = data(shape, op)
    check_layer("Reduction", {0: op, 1: 0, 2: 1.0, 3: list(axes), 4: keepdims, 5: 1}, [], [x])


@pytest.mark.parametrize("op", OPS)
def test_reduction_negative_axes_and_coeff(op):
    x = data((4, 3, 2, 5), op)
    check_layer("Reduction", {0: op, 1: 0, 2: 2.5, 3: [-1, -3], 4: 0, 5: 1}, [], [x])
    check_layer("Reduction", {0: op, 1: 0, 2: 1.0, 3: [-2], 4: 1, 5: 1}, [], [data((3, 6, 7), op)])


def test_reduction_1d_always_reduces_whole():
    check_layer("Reduction", {0: 0, 1: 0, 3: [0], 4: 1, 5: 1}, [], [rand(9)])
    check_layer("Reduction", {0: 3, 1: 0, 3: [-1], 4: 0, 5: 1}, [], [rand(9)])


def test_reduction_reduce_all_ignores_axes():
    check_layer("Reduction", {0: 0, 1: 1, 3: [1], 4: 0, 5: 1}, [], [rand(3, 4, 5)])


def test_reduction_edge_values():
    x = rand(4, 3, 5, lo=-2, hi=2)
    x[0] = -np.inf  # max over an all -inf slice is -FLT_MAX in ncnn
    x[1] = 0.0  # L2 of zeros, logsum of zeros = -inf
    x[2, 0] = 100.0  # logsumexp overflows (no max subtraction in ncnn)
    for op in (4, 5, 9, 10):
        check_layer("Reduction", {0: op, 1: 0, 3: [1, 2], 4: 0, 5: 1}, [], [x])
    # L2 of the slice of -inf: ncnn's answer depends on the CPU (+inf on most, NaN on an AMD
    # EPYC with AVX2); vkncnn's is the arithmetic's, sqrt(+inf) = +inf (docs/semantics.md)
    want, got = (out["out0"] for out in layer_outputs("Reduction", {0: 8, 1: 0, 3: [1, 2], 4: 0, 5: 1}, [], [x]))
    assert got.shape == want.shape == (4,)
    assert got[0] == np.inf
    assert rel_err(got[1:], want[1:]) <= 1e-4


def test_reduction_old_param_with_axes_is_rejected_like_ncnn():
    import vkncnn

    text = layer_param_text("Reduction", {0: 0, 1: 0, 3: [1]}, 1)
    with pytest.raises(AssertionError):
        run_ncnn(text, b"", {"in0": rand(3, 4)}, ["out0"])
    with pytest.raises(Error):
        vkncnn.Net().load_param_mem(text)


def test_reduction_bad_axes_raise():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("Reduction")
    pd = ParamDict()
    pd.set(1, 0)
    pd.set(3, [3])
    pd.set(5, 1)
    layer.load_param(pd)
    with pytest.raises(Error):
        layer.forward_cpu([rand(3, 4, 5)], None)
