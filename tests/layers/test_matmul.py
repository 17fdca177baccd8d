"""MatMul against real ncnn: every pair of ranks 1-4, transB, and batch broadcasting."""

import pytest

from tests.oracle import check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ShapeError

K = 7


def b_shape(batch: tuple, n: int, trans_b: int) -> tuple:
    return batch + ((n, K) if trans_b else (K, n))


CASES = [
    # (A shape, B batch dims, N) -- a B of rank 1 is given as batch None
    ((K,), None, 0),
    ((K,), (), 5),
    ((K,), (3,), 5),
    ((K,), (2, 3), 4),
    ((4, K), None, 0),
    ((4, K), (), 5),
    ((4, K), (3,), 5),
    ((4, K), (2, 3), 1),
    ((3, 4, K), None, 0),
    ((3, 4, K), (), 5),
    ((3, 4, K), (3,), 5),
    ((1, 4, K), (3,), 5),
    ((3, 4, K), (1,), 6),
    ((3, 4, K), (2, 3), 5),
    ((2, 3, 4, K), None, 0),
    ((2, 3, 4, K), (), 5),
    ((2, 3, 4, K), (3,), 2),
    ((2, 3, 4, K), (2, 3), 5),
    ((2, 1, 4, K), (1, 3), 5),
    ((1, 3, 4, K), (2, 1), 5),
    ((2, 3, 1, K), (2, 3), 1),
]


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("a_shape,batch,n", CASES)
def test_ranks_and_broadcast(a_shape, batch, n, trans_b):
    b = rand(K, seed=1) if batch is None else rand(*b_shape(batch, n, trans_b), seed=1)
    check_layer("MatMul", {0: trans_b}, [], [rand(*a_shape), b])


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (16, 64, 24), (33, 12, 3)])
def test_sizes(m, k, n):
    check_layer("MatMul", {}, [], [rand(m, k), rand(k, n)])


@pytest.mark.parametrize("a,b", [((4, K), (K + 1, 3)), ((K,), (K + 1,)), ((2, 4, K), (3, K, 5))])
def test_bad_shapes_raise(a, b):
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("MatMul", {}, 2), b"", {"in0": rand(*a), "in1": rand(*b)}, ["out0"])
