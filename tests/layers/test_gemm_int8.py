"""Gemm with int8_scale_term (18) against real ncnn: a constant A or B stored int8 with
its scales (A one per row, B one), blob operands quantized on the fly (A per row, B as
a whole), every transpose, C constant or blob, alpha/beta, output_transpose."""

from itertools import product

import numpy as np
import pytest

from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError
from vkncnn.testing import run_layer
from vkncnn.tools.dev.layerfuzz.storage import fp32, int8, raw

M, N, K = 5, 6, 9


def _q(n, seed):
    return np.random.default_rng(seed).integers(-127, 128, n)


@pytest.mark.parametrize("trans_a,trans_b", list(product([0, 1], [0, 1])))
@pytest.mark.parametrize("c", ["none", "const", "blob"])
def test_int8_constant_b_matches_ncnn(trans_a, trans_b, c):
    params = {0: 0.75, 1: -1.5, 2: trans_a, 3: trans_b, 5: 1, 8: N, 9: K, 18: 1}
    a = rand(K, M) if trans_a else rand(M, K)
    weights = [int8(_q(N * K, 1))]
    inputs = [a]
    if c == "const":
        params.update({6: 1, 7: M, 10: 4})
        weights.append(fp32(rand(N, seed=2)))
    elif c == "blob":
        inputs.append(rand(M, 1, seed=2))
    weights.append(raw([87.5]))
    check_layer("Gemm", params, b"".join(weights), inputs, tol=1e-4)


@pytest.mark.parametrize("trans_a,trans_b", list(product([0, 1], [0, 1])))
def test_int8_constant_a_matches_ncnn(trans_a, trans_b):
    params = {2: trans_a, 3: trans_b, 4: 1, 7: M, 9: K, 14: 1, 18: 1}
    b = rand(N, K) if trans_b else rand(K, N)
    weights = int8(_q(M * K, 3)) + raw(np.linspace(50, 150, M))
    check_layer("Gemm", params, weights, [b, rand(N, seed=4)], tol=1e-4)


@pytest.mark.parametrize("trans_a,trans_b", list(product([0, 1], [0, 1])))
def test_int8_blob_operands_quantized_on_the_fly(trans_a, trans_b):
    a = rand(K, M) if trans_a else rand(M, K)
    b = rand(N, K, seed=1) if trans_b else rand(K, N, seed=1)
    a[0] = 0.0  # an all-zero row takes scale 1
    check_layer("Gemm", {0: 1.25, 2: trans_a, 3: trans_b, 11: 1, 18: 1}, b"", [a, b, rand(M, N, seed=2)], tol=1e-4)


@pytest.mark.parametrize("term", [4, 5, 6, 999])
def test_quantize_terms_ncnn_refuses_raise(term):
    with pytest.raises(ParamError, match="quantize_term"):
        run_layer("Gemm", {18: term}, [], [rand(M, K), rand(K, N)])
