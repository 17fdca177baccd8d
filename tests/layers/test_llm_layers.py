"""RMSNorm, RotaryEmbed, SDPA (the LLM decoder layers) against real ncnn."""

import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.gpu.vulkan.instance import get_gpu_count
from vkncnn.testing import run_layer


def gpu_available() -> bool:
    return get_gpu_count() > 0


@pytest.mark.parametrize("shape", [(16,), (5, 16), (3, 4, 16), (2, 3, 8)])
@pytest.mark.parametrize("affine", [0, 1])
@pytest.mark.parametrize("eps", [1e-6, 0.001])
def test_rmsnorm(shape, affine, eps):
    size = shape[-1] if len(shape) < 3 or shape == (3, 4, 16) else shape[-1] * shape[-2]
    weights = [raw(rand(size, seed=2, lo=0.5, hi=1.5))] if affine else []
    check_layer("RMSNorm", {0: size, 1: eps, 2: affine}, weights, [rand(*shape)])


@pytest.mark.parametrize("shape,size", [((8, 5, 6, 8), 8), ((8, 5, 6, 8), 48), ((8, 5, 6, 8), 240),
                                        ((5, 2, 4, 1), 4), ((3, 2, 7), 14)])
@pytest.mark.parametrize("affine", [0, 1])
@pytest.mark.parametrize("gpu", [False, True])
def test_rmsnorm_groups_of_4d_blobs(shape, size, affine, gpu):
    """ncnn normalises a 4-D blob by rows (affine_size == w), by (h, w) planes (== w*h) or by
    channels (found by tools/dev/layerfuzz: vkncnn used rows, and broadcast gamma wrongly)."""
    if gpu and not gpu_available():
        pytest.skip("no Vulkan device")
    weights = [raw(rand(size, seed=2, lo=0.5, hi=1.5))] if affine else []
    check_layer("RMSNorm", {0: size, 1: 0.001, 2: affine}, weights, [rand(*shape)], gpu=gpu)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("heads,seq,dim", [(2, 5, 8), (4, 1, 16), (3, 7, 6)])
def test_rotaryembed(interleaved, heads, seq, dim):
    ang = rand(seq, dim // 2, seed=3, lo=-3, hi=3)
    check_layer("RotaryEmbed", {0: interleaved}, [], [rand(heads, seq, dim), np.cos(ang), np.sin(ang)])


# src <= 4 query rows take the GPU's split-sum P x V kernel (dst 130: more keys than its
# workgroup, dv 6: a partial column block), longer ones the 4 x 4 block kernel
@pytest.mark.parametrize("heads,groups,src,dst,d,dv", [(4, 4, 5, 5, 8, 8), (4, 2, 3, 3, 16, 8), (2, 1, 1, 6, 8, 4),
                                                       (6, 2, 2, 130, 8, 6)])
@pytest.mark.parametrize("mask", [0, 1])
@pytest.mark.parametrize("scale", [0.0, 0.3])
@pytest.mark.parametrize("gpu", [False, True])
def test_sdpa(heads, groups, src, dst, d, dv, mask, scale, gpu):
    ins = [rand(heads, src, d, seed=1), rand(groups, dst, d, seed=2), rand(groups, dst, dv, seed=3)]
    if mask:
        m = np.triu(np.full((src, dst), -1e9, np.float32), k=dst - src + 1)
        ins.append(m)
    check_layer("SDPA", {5: mask, 6: scale}, [], ins, gpu=gpu)


@pytest.mark.parametrize("mask", [0, 1])
def test_sdpa_kv_cache(mask):
    """KV cache: outputs carry past+current k/v and attention runs over all of it.

    Compared with a direct numpy reference, not the ncnn wheel: its SDPA reads numpy-fed
    past caches through its own raw cache layout (capacity in cstep), which a Mat made
    from an array does not have, so its output there is not a meaningful oracle.
    """
    heads, groups, past, cur, d = 4, 2, 3, 2, 8
    q, k, v = rand(heads, cur, d, seed=1), rand(groups, cur, d, seed=2), rand(groups, cur, d, seed=3)
    pk, pv = rand(groups, past, d, seed=4), rand(groups, past, d, seed=5)
    m = rand(cur, past + cur, seed=6)
    ins = [q, k, v] + ([m] if mask else []) + [pk, pv]
    out, ck, cv = run_layer("SDPA", {5: mask, 7: 1}, [], ins, n_outputs=3)
    kk, vv = np.concatenate([pk, k], 1), np.concatenate([pv, v], 1)
    assert np.array_equal(ck, kk) and np.array_equal(cv, vv)
    s = np.matmul(q, np.repeat(kk, 2, 0).transpose(0, 2, 1)) / np.sqrt(d) + (m if mask else 0)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.matmul(p / p.sum(-1, keepdims=True), np.repeat(vv, 2, 0))
    assert np.abs(out - want).max() < 1e-5
