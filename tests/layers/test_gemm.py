"""Gemm against real ncnn: alpha/beta, transA/transB, constant A/B/C from the .bin
with every constant_broadcast_type_C, C given as a blob in every broadcast shape,
output_transpose, output_N1M, 1-D and (c, 1, w) operands."""

from itertools import product

import pytest

from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

M, N, K = 3, 5, 7
C_SHAPES = [None, (1,), (M,), (N,), (M, 1), (1, N), (M, N), (1, 1)]


def operands(trans_a, trans_b, seed=0):
    a = rand(K, M, seed=seed) if trans_a else rand(M, K, seed=seed)
    b = rand(N, K, seed=seed + 1) if trans_b else rand(K, N, seed=seed + 1)
    return a, b


@pytest.mark.parametrize("trans_a,trans_b", list(product([0, 1], [0, 1])))
@pytest.mark.parametrize("c_shape", C_SHAPES)
def test_blob_operands_and_c_broadcast(trans_a, trans_b, c_shape):
    a, b = operands(trans_a, trans_b)
    inputs = [a, b] + ([rand(*c_shape, seed=9)] if c_shape else [])
    check_layer("Gemm", {0: 0.75, 1: -1.5, 2: trans_a, 3: trans_b}, [], inputs)


@pytest.mark.parametrize("n1m,transpose", list(product([0, 1], [0, 1])))
@pytest.mark.parametrize("c_shape", [None, (M, N)])
def test_output_layouts(n1m, transpose, c_shape):
    a, b = operands(0, 1)
    inputs = [a, b] + ([rand(*c_shape)] if c_shape else [])
    check_layer("Gemm", {3: 1, 11: n1m, 14: transpose, 12: 1, 13: 1}, [], inputs)


def test_square_1d_c_is_per_column():
    """M == N: a 1-D C matches both rules; ncnn's later rule ([N], per column) wins."""
    check_layer("Gemm", {}, [], [rand(4, 6), rand(6, 4), rand(4)])


@pytest.mark.parametrize("broadcast", [-1, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("trans_b", [0, 1])
def test_constant_b_and_c(broadcast, trans_b):
    """The pnnx Linear pattern: A from a blob, B (and C) from the .bin."""
    a, b = operands(0, trans_b)
    c_shape = {-1: None, 0: (1,), 1: (M,), 2: (M, 1), 3: (M, N), 4: (1, N)}[broadcast]
    weights = [tagged(b)] + ([tagged(rand(*c_shape, seed=4))] if c_shape else [])
    params = {3: trans_b, 5: 1, 6: 1, 7: M, 8: N, 9: K, 10: broadcast, 0: 1.25, 1: 0.5}
    check_layer("Gemm", params, weights, [a])


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("c_blob", [False, True])
def test_constant_a(trans_a, c_blob):
    a, b = operands(trans_a, 0)
    inputs = [b] + ([rand(M, N)] if c_blob else [])
    check_layer("Gemm", {2: trans_a, 4: 1, 7: M, 9: K}, [tagged(a)], inputs)


@pytest.mark.parametrize("constant_c", [0, 1])
def test_constant_a_and_b(constant_c):
    a, b = operands(1, 1)
    params = {2: 1, 3: 1, 4: 1, 5: 1, 6: constant_c, 7: M, 8: N, 9: K, 10: 1, 14: 1}
    if constant_c:
        check_layer("Gemm", params, [tagged(a), tagged(b), tagged(rand(M))], [])
    else:
        check_layer("Gemm", params, [tagged(a), tagged(b)], [rand(N)])


@pytest.mark.parametrize("a_shape,b_shape,params", [
    ((K,), (K, N), {}),
    ((K,), (1, N), {2: 1}),
    ((M, K), (K,), {3: 1}),
    ((M, 1, K), (K, 1, N), {}),
    ((K, 1, M), (N, 1, K), {2: 1, 3: 1}),
])
def test_vector_and_3d_operands(a_shape, b_shape, params):
    check_layer("Gemm", params, [], [rand(*a_shape), rand(*b_shape)])


def test_large():
    check_layer("Gemm", {3: 1, 5: 1, 8: 96, 9: 130, 6: 1, 10: 4}, [tagged(rand(96, 130)), tagged(rand(1, 96))],
                [rand(33, 130)])


def _run(params, weights, inputs):
    text = layer_param_text("Gemm", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("inputs", [
    [rand(M, K), rand(K + 1, N)],            # K mismatch
    [rand(M, K), rand(K, N), rand(2, 2)],    # C broadcasts nowhere
    [rand(2, M, K), rand(K, N)],             # 3-D A with h > 1
])
def test_bad_shapes_raise(inputs):
    with pytest.raises(ShapeError):
        _run({}, [], inputs)


@pytest.mark.parametrize("params", [{4: 1, 7: 0, 9: K}, {5: 1, 8: N, 9: 0}, {6: 1, 10: 5}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, [], [rand(M, K), rand(K, N)])
