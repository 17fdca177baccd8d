"""MultiHeadAttention with int8_scale_term (18) against real ncnn: int8-stored weights with
their scales, all six products in int8 (projections, per-head q k^T and p v, output),
self/cross attention, masks, the kv cache, head counts and unequal q/k/v widths."""

import numpy as np
import pytest

from tests.oracle import check_layer, rand
from vkncnn.tools.dev.layerfuzz.storage import int8, raw


def mha_int8(embed, heads, qdim, kdim, vdim, extra=None, seed=0):
    """Params and .bin bytes: q, k, v, out weights int8 (each with its float bias), then
    the scales (q, k, v one per row; out one), as ncnn2int8 writes them."""
    rng = np.random.default_rng(seed)
    params = {0: embed, 1: heads, 2: embed * qdim, 3: kdim, 4: vdim, 18: 1, **(extra or {})}
    parts = []
    for n_in, n_out in ((qdim, embed), (kdim, embed), (vdim, embed), (embed, qdim)):
        parts += [int8(rng.integers(-127, 128, n_in * n_out)), raw(rng.uniform(-0.5, 0.5, n_out))]
    parts += [raw(rng.uniform(100, 400, embed)) for _ in range(3)] + [raw(rng.uniform(100, 400, 1))]
    return params, b"".join(parts)


@pytest.mark.parametrize("embed,heads,qdim,kdim,vdim", [
    (8, 1, 8, 8, 8), (8, 2, 6, 5, 7), (12, 3, 12, 4, 16), (16, 4, 24, 24, 24), (24, 8, 3, 12, 1)])
@pytest.mark.parametrize("src,dst", [(1, 1), (4, 5), (7, 3)])
def test_int8_cross_attention_matches_ncnn(embed, heads, qdim, kdim, vdim, src, dst):
    params, weights = mha_int8(embed, heads, qdim, kdim, vdim, seed=src + dst)
    check_layer("MultiHeadAttention", params, weights, [rand(src, qdim), rand(dst, kdim, seed=1),
                                                         rand(dst, vdim, seed=2)], tol=2e-3)


@pytest.mark.parametrize("n_inputs", [1, 2])
def test_int8_self_attention_and_shared_kv(n_inputs):
    params, weights = mha_int8(8, 2, 8, 8, 8)
    inputs = [rand(5, 8)] + [rand(4, 8, seed=1)] * (n_inputs - 1)
    check_layer("MultiHeadAttention", params, weights, inputs, tol=2e-3)


@pytest.mark.parametrize("mask_shape", [(4, 6), (2, 4, 6)])
def test_int8_mask_matches_ncnn(mask_shape):
    params, weights = mha_int8(8, 2, 6, 5, 7, extra={5: 1})
    inputs = [rand(4, 6), rand(6, 5, seed=1), rand(6, 7, seed=2), rand(*mask_shape, seed=3, lo=-3, hi=0)]
    check_layer("MultiHeadAttention", params, weights, inputs, tol=2e-3)


@pytest.mark.parametrize("src,past", [(1, 3), (3, 2)])
def test_int8_kv_cache_self_attention_matches_ncnn(src, past):
    params, weights = mha_int8(8, 2, 6, 6, 6, extra={7: 1})
    inputs = [rand(src, 6), rand(2, past, 4, seed=1), rand(2, past, 4, seed=2)]
    check_layer("MultiHeadAttention", params, weights, inputs, n_outputs=3, tol=2e-3)


def test_int8_custom_scale_matches_ncnn():
    # the q projection's alpha is param 6, applied after its int8 sum is descaled
    params, weights = mha_int8(8, 2, 8, 8, 8, extra={6: 0.3})
    check_layer("MultiHeadAttention", params, weights, [rand(5, 8)], tol=2e-3)
