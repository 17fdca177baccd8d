import numpy as np
import pytest

from tests.oracle import check_layer, layer_outputs, layer_param_text, rand, rel_err, run_ncnn
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


RSQRT = 6
VECTOR = 16  # values a vector loop takes at once, at most (AVX-512's floats)


def vector_answers(op, x):
    """ncnn's answers for x's values from its vector code on this CPU: the values as one row of
    a multiple of VECTOR, which leaves no scalar tail on any CPU."""
    row = np.zeros(-(-x.size // VECTOR) * VECTOR, np.float32)
    row[:x.size] = x.ravel()
    out = run_ncnn(layer_param_text("UnaryOp", {0: op}, 1), b"", {"in0": row}, ["out0"])["out0"]
    return out[:x.size].reshape(x.shape)


def agree(a, b, tol=1e-4):
    """Per value, rel_err's rule: the same NaN, the same infinity, or within tol (relative
    above 1, absolute below)."""
    return np.array([rel_err(u, v) <= tol for u, v in zip(a.ravel(), b.ravel())]).reshape(a.shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_unaryop_matches_ncnn(shape, op):
    """The edge values fill the first 16 elements, random values in [-3, 3] the rest.

    ncnn's answer at a domain edge depends on the CPU: its vector code clamps exp's argument
    at 88.376 and takes acosh below 1 through a log clamped at FLT_MIN, but on an AMD EPYC
    with AVX2 the values past a row's last whole vector came out as libm's (exp(100) = inf,
    acosh(-100) = NaN), as they did not on the AVX-512 machines these tests were written on,
    and its rsqrt of a subnormal came out -inf. vkncnn gives the vector code's answer
    (docs/semantics.md), so each value must agree with ncnn's here or with ncnn's vector
    code's, and rsqrt of a subnormal may also be exact."""
    x = with_edges(shape, op)
    want, got = (out["out0"] for out in layer_outputs("UnaryOp", {0: op}, [], [x]))
    assert got.shape == want.shape
    ok = agree(got, want) | agree(got, vector_answers(op, x))
    if op == RSQRT:
        subnormal = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
        exact = 1 / np.sqrt(np.where(subnormal, np.abs(x), 1).astype(np.float64))
        ok |= subnormal & agree(got, exact)
    assert ok.all(), [(float(v), float(g), float(w)) for v, g, w in zip(x[~ok], got[~ok], want[~ok])]


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
