"""MultiHeadAttention against real ncnn: self/cross attention with 1, 2 or 3 inputs,
kdim/vdim/qdim different from embed_dim, head counts, scale, additive masks
(2-D, per-head 3-D, broadcast rows/columns) and the kv cache (self-attention
appends, cross-attention reuses; empty cache on the first step)."""

import numpy as np
import pytest

from tests.oracle import (
    bin_bytes,
    check_layer,
    layer_param_text,
    rand,
    raw,
    rel_err,
    run_ncnn,
    run_vkncnn,
    tagged,
)
from vkncnn.errors import ParamError, ShapeError
from vkncnn.format.modelbin import model_bin_from_bytes
from vkncnn.format.paramdict import ParamDict
from vkncnn.layer import create_layer
from vkncnn.option import Option


def mha_setup(embed, heads, qdim, kdim=None, vdim=None, extra=None, seed=0):
    kdim = embed if kdim is None else kdim
    vdim = embed if vdim is None else vdim
    params = {0: embed, 1: heads, 2: embed * qdim, 3: kdim, 4: vdim, **(extra or {})}
    weights = []
    for i, (out_dim, in_dim) in enumerate([(embed, qdim), (embed, kdim), (embed, vdim), (qdim, embed)]):
        weights += [tagged(rand(out_dim, in_dim, seed=seed + 2 * i)), raw(rand(out_dim, seed=seed + 2 * i + 1))]
    return params, weights


@pytest.mark.parametrize("embed,heads,qdim,kdim,vdim", [
    (8, 1, 8, 8, 8), (8, 2, 6, 5, 7), (12, 3, 12, 4, 16), (16, 4, 24, 24, 24), (24, 8, 3, 12, 1), (16, 16, 16, 8, 8),
])
@pytest.mark.parametrize("src,dst", [(1, 1), (4, 5), (7, 3)])
def test_cross_attention(embed, heads, qdim, kdim, vdim, src, dst):
    params, weights = mha_setup(embed, heads, qdim, kdim, vdim)
    check_layer("MultiHeadAttention", params, weights, [rand(src, qdim, seed=1), rand(dst, kdim, seed=2),
                                                        rand(dst, vdim, seed=3)])


@pytest.mark.parametrize("embed,heads,dim", [(8, 2, 8), (12, 4, 6), (24, 3, 16)])
@pytest.mark.parametrize("seq", [1, 5])
def test_self_attention_and_shared_kv(embed, heads, dim, seq):
    params, weights = mha_setup(embed, heads, dim, dim, dim)
    check_layer("MultiHeadAttention", params, weights, [rand(seq, dim)])
    check_layer("MultiHeadAttention", params, weights, [rand(seq, dim), rand(seq + 2, dim, seed=4)])


def test_vector_query():
    params, weights = mha_setup(8, 2, 6, 6, 6)
    check_layer("MultiHeadAttention", params, weights, [rand(6)])


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5])
def test_scale(scale):
    params, weights = mha_setup(12, 3, 12, extra={6: scale})
    check_layer("MultiHeadAttention", params, weights, [rand(4, 12), rand(6, 12), rand(6, 12)])


@pytest.mark.parametrize("mask_shape", [(4, 6), (3, 4, 6), (1, 6), (6,), (1, 4, 6), (4, 1)])
def test_mask(mask_shape):
    params, weights = mha_setup(12, 3, 10, 8, 9, extra={5: 1})
    mask = rand(*mask_shape, seed=7, lo=-3.0, hi=1.0)
    check_layer("MultiHeadAttention", params, weights, [rand(4, 10), rand(6, 8), rand(6, 9), mask])


def test_causal_mask_self_attention():
    params, weights = mha_setup(8, 2, 8, extra={5: 1})
    causal = np.triu(np.full((5, 5), -1e4, np.float32), k=1)
    check_layer("MultiHeadAttention", params, weights, [rand(5, 8), causal])


# -- kv cache -----------------------------------------------------------------------------------
E, H, D = 8, 2, 6


def cache(past, seed):
    return rand(H, past, E // H, seed=seed)


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("src,past", [(1, 3), (4, 2), (3, 1)])
def test_kv_cache_self_attention_appends(mask, src, past):
    params, weights = mha_setup(E, H, D, D, D, extra={7: 1, 5: int(mask)})
    inputs = [rand(src, D)] + ([rand(src, src + past, seed=9)] if mask else []) + [cache(past, 1), cache(past, 2)]
    check_layer("MultiHeadAttention", params, weights, inputs, n_outputs=3)


@pytest.mark.parametrize("n_kv", [1, 2])
def test_kv_cache_cross_attention_reuses_cache(n_kv):
    params, weights = mha_setup(E, H, D, D, D, extra={7: 1})
    kv = [rand(5, D, seed=3)] * n_kv
    check_layer("MultiHeadAttention", params, weights, [rand(4, D)] + kv + [cache(3, 1), cache(3, 2)], n_outputs=3)


def _run_direct(params, weights, inputs, n_out):
    """Layer called directly: the Extractor does not take empty Mats (the first-step cache)."""
    layer = create_layer("MultiHeadAttention")
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, v)
    layer.load_param(pd)
    layer.load_model(model_bin_from_bytes(bin_bytes(weights)))
    return layer.forward_cpu(inputs, Option())


@pytest.mark.parametrize("n_kv", [0, 1])
def test_kv_cache_first_step_empty(n_kv):
    params, weights = mha_setup(E, H, D, D, D, extra={7: 1})
    empty = np.zeros((0,), np.float32)
    inputs = [rand(4, D)] + [rand(5, D, seed=3)] * n_kv + [empty, empty]
    text = layer_param_text("MultiHeadAttention", params, len(inputs), 3)
    want = run_ncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0", "out1", "out2"])
    got = _run_direct(params, weights, inputs, 3)
    for g, name in zip(got, ["out0", "out1", "out2"]):
        assert g.shape == want[name].shape
        assert rel_err(g, want[name]) <= 1e-4


# -- errors ----------------------------------------------------------------------------------------
def _run(params, weights, inputs, n_out=1):
    text = layer_param_text("MultiHeadAttention", params, len(inputs), n_out)
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)},
                      [f"out{i}" for i in range(n_out)])


@pytest.mark.parametrize("inputs", [
    [rand(4, 7)],                                   # q width != qdim
    [rand(1, 4, 6)],                                # 3-D q
    [rand(4, 6), rand(5, 6), rand(6, 6)],           # k and v lengths differ
    [rand(4, 6), rand(5, 6), rand(5, 6), rand(5, 6)],  # too many inputs
])
def test_bad_inputs_raise(inputs):
    params, weights = mha_setup(8, 2, 6, 6, 6)
    with pytest.raises(ShapeError):
        _run(params, weights, inputs)


def test_bad_mask_and_cache_raise():
    params, weights = mha_setup(8, 2, 6, 6, 6, extra={5: 1})
    with pytest.raises(ShapeError):
        _run(params, weights, [rand(4, 6), rand(3, 5)])
    params, weights = mha_setup(8, 2, 6, 6, 6, extra={7: 1})
    with pytest.raises(ShapeError):
        _run(params, weights, [rand(4, 6), rand(3, 8), rand(3, 8)], 3)


@pytest.mark.parametrize("params", [{0: 8, 1: 3, 2: 48}, {0: 8, 1: 2, 2: 47}, {0: 8, 1: 2, 2: 48, 18: 5}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, [], [rand(4, 6)])
