"""BinaryOp against ncnn: every op, with_scalar, and ncnn's broadcasting over every pair of
ranks 1-4 in both operand orders."""

import itertools

import numpy as np
import pytest

from tests.oracle import check_layer, rand
from vkncnn.errors import Error

ALL_OPS = range(19)  # add sub mul div max min pow rsub rdiv rpow atan2 ratan2 fmod rfmod
#                      logaddexp floor_divide rfloor_divide remainder rremainder
POW_OPS = (6, 9)

# one A per rank with odd inner sizes; the partners below cover every lower rank
A_SHAPES = {1: [(12,)], 2: [(5, 13)], 3: [(4, 3, 5)], 4: [(4, 2, 3, 5)]}


def ncnn_accepted_partners(shape):
    """Every B ncnn broadcasts against A: any prefix of A's shape, A's own rank included
    (ncnn lines lower ranks up with the OUTER axes), with any of its axes set to 1; plus
    the legacy 1-D row along w."""
    out = set()
    for k in range(1, len(shape) + 1):
        for mask in itertools.product((0, 1), repeat=k):
            out.add(tuple(1 if m else s for m, s in zip(mask, shape[:k])))
    out.add((shape[-1],))
    return sorted(out)


def operand(shape, op, seed):
    if op in POW_OPS:
        return rand(*shape, seed=seed, lo=0.2, hi=2.0)  # pow is only defined for positive bases
    return rand(*shape, seed=seed, lo=-2.0, hi=2.0)


BROADCAST_CASES = [(sa, sb) for shapes in A_SHAPES.values() for sa in shapes
                   for sb in ncnn_accepted_partners(sa)]


@pytest.mark.parametrize("sa,sb", BROADCAST_CASES, ids=[f"{a}x{b}" for a, b in BROADCAST_CASES])
def test_binaryop_broadcasting_both_orders(sa, sb):
    a, b = rand(*sa, seed=1), rand(*sb, seed=2)
    for op in (1, 3):  # ops that show the operand order
        check_layer("BinaryOp", {0: op}, [], [a, b])
        check_layer("BinaryOp", {0: op}, [], [b, a])


@pytest.mark.parametrize("sa,sb", [((3, 2, 7), (3,)), ((3, 2, 7), (3, 2)), ((3, 2, 7), (7,)),
                                   ((24, 1, 5), (24, 1, 1)), ((3, 2, 1, 5), (3, 1, 1, 5)),
                                   ((16, 2, 3, 5), (16,)), ((8, 3), (1, 3)), ((1, 4, 5), (6, 1, 1)),
                                   ((1, 5), (3, 1)), ((2, 1, 3, 1), (1, 4, 1, 5)),
                                   ((5, 3, 5), (5,)), ((4, 2, 3, 4), (4,)), ((4, 2, 3, 4), (4, 1))])
def test_binaryop_broadcasting_mixed_channels(sa, sb):
    # channel counts that ncnn packs differently (1/3/8/16/24), and both operands broadcast at once
    a, b = rand(*sa, seed=1), rand(*sb, seed=2)
    check_layer("BinaryOp", {0: 1}, [], [a, b])
    check_layer("BinaryOp", {0: 1}, [], [b, a])


SAME_SHAPES = [(7,), (5, 13), (16, 3, 5), (4, 3, 2, 5)]


@pytest.mark.parametrize("op", ALL_OPS)
@pytest.mark.parametrize("shape", SAME_SHAPES)
def test_binaryop_every_op(op, shape):
    check_layer("BinaryOp", {0: op}, [], [operand(shape, op, 1), operand(shape, op, 2)])


@pytest.mark.parametrize("op", ALL_OPS)
def test_binaryop_every_op_broadcast(op):
    a = operand((8, 3, 5), op, 1)
    check_layer("BinaryOp", {0: op}, [], [a, operand((8,), op, 2)])
    check_layer("BinaryOp", {0: op}, [], [operand((8, 3), op, 3), a])
    check_layer("BinaryOp", {0: op}, [], [a, operand((1, 3, 1), op, 4)])


@pytest.mark.parametrize("op", ALL_OPS)
@pytest.mark.parametrize("shape", [(7,), (3, 2, 3, 5)])
def test_binaryop_with_scalar(op, shape):
    b = 0.5 if op in POW_OPS else -0.6
    check_layer("BinaryOp", {0: op, 1: 1, 2: b}, [], [operand(shape, op, 1)])


def test_binaryop_division_by_zero_is_nan_like_ncnn():
    # ncnn's vectorised divide multiplies by a reciprocal estimate: x / 0 is nan, not inf.
    # 16 channels keeps every element on the vector path (a scalar tail would give inf).
    a = rand(16, 2, 4, seed=1)
    b = rand(16, 2, 4, seed=2)
    b.ravel()[::3] = 0.0
    check_layer("BinaryOp", {0: 3}, [], [a, b])
    check_layer("BinaryOp", {0: 8}, [], [a, b])


def test_binaryop_pow_of_negative_base_saturates_like_ncnn():
    # ncnn's pow is exp(y * log(x)); for x <= 0 it returns exp's saturated 2.4e38
    a = rand(16, 2, 4, seed=1, lo=-2, hi=2)
    check_layer("BinaryOp", {0: 6, 1: 1, 2: 2.0}, [], [a])
    check_layer("BinaryOp", {0: 6}, [], [a, rand(16, 2, 4, seed=2, lo=-2, hi=2)])


@pytest.mark.parametrize("sa,sb", [((3, 5), (4, 5)), ((5,), (6,)), ((4, 3, 5), (4, 2, 5)), ((4, 3, 5), (3,)),
                                   ((2, 3, 4, 5), (2, 3, 4, 6)), ((6, 5), (4,))])
def test_binaryop_incompatible_shapes_raise(sa, sb):
    from vkncnn.cpu_fallback import binary

    with pytest.raises(Error):
        binary.binary_op(rand(*sa), rand(*sb), 0)
    with pytest.raises(Error):
        binary.binary_op(rand(*sb), rand(*sa), 0)


def test_binaryop_prefix_rule_beats_legacy_row_rule():
    # A (2, 2) with B (2,): ncnn reads B per row (prefix), numpy would read it per column
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([10, 20], np.float32)
    from vkncnn.cpu_fallback import binary

    assert np.array_equal(binary.binary_op(a, b, 0), [[11, 12], [23, 24]])
    check_layer("BinaryOp", {0: 0}, [], [a, b])


def test_binaryop_unknown_op_is_rejected():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    pd = ParamDict()
    pd.set(0, 19)
    with pytest.raises(Error):
        create_layer("BinaryOp").load_param(pd)
