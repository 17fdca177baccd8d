"""SDPA of a few query rows in one dispatch (sdpa_decode.comp) equals the numpy path and the
three-dispatch path it replaces: keys in one workgroup and split over many, one workgroup's
keys in one chunk and in several, grouped KV heads, masks shared and per head, value widths
that leave invocations idle, NaN in one split, fp32 and fp16, pipelines made for the shapes
(unrolled loops) and for any."""

from __future__ import annotations

import numpy as np
import pytest

from tests.oracle import needs_gpu
from vkncnn.gpu.compiler import registry
from vkncnn.layers import sdpa
from vkncnn.testing import FP16_TOLERANCE, rel_err, run_layer, time_layer

pytestmark = [pytest.mark.gpu, needs_gpu]

FP32_TOLERANCE = 2e-4  # sums in another order than numpy's

# (heads, groups, query rows, key rows, d, dv, mask: None, "shared" or "per head")
CASES = [
    (4, 4, 1, 7, 8, 8, None),
    (14, 2, 1, 300, 64, 64, "shared"),     # GQA, as a decoder's step: keys in 4 splits
    (8, 2, 3, 1500, 64, 64, "per head"),   # 23 splits; in one workgroup, two chunks
    (2, 1, 4, 2049, 128, 96, "shared"),    # three chunks in one; 96 columns: a partial lane idles
    (3, 3, 2, 5, 4, 4, None),              # tiny widths
]


def _inputs(heads, groups, src, dst, d, dv, mask, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (heads, src, d)).astype(np.float32)
    k = rng.uniform(-1, 1, (groups, dst, d)).astype(np.float32)
    v = rng.uniform(-1, 1, (groups, dst, dv)).astype(np.float32)
    if mask is None:
        return {}, [q, k, v]
    shape = (src, dst) if mask == "shared" else (heads, src, dst)
    m = rng.uniform(-2, 0, shape).astype(np.float32)
    m[..., dst // 2] = -1e30  # a key masked off
    return {5: 1}, [q, k, v, m]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("max_splits", [sdpa.DECODE_MAX_SPLITS, 1], ids=["split", "one_workgroup"])
@pytest.mark.parametrize("unroll", [1, 0], ids=["shapes_known", "any_shape"])
def test_one_dispatch_matches_numpy_and_three_steps(case, fp16, max_splits, unroll, monkeypatch):
    params, inputs = _inputs(*case)
    want = run_layer("SDPA", params, b"", inputs)[0]
    tolerance = FP16_TOLERANCE if fp16 else FP32_TOLERANCE
    monkeypatch.setattr(sdpa, "DECODE_MAX_SPLITS", max_splits)
    monkeypatch.setattr(sdpa, "DECODE_UNROLL", unroll)
    fused = run_layer("SDPA", params, b"", inputs, gpu=True, fp16=fp16)[0]
    assert rel_err(fused, want) < tolerance
    monkeypatch.setattr(sdpa, "DECODE_MAX_ROWS", 0)
    steps = run_layer("SDPA", params, b"", inputs, gpu=True, fp16=fp16)[0]
    assert rel_err(fused, steps) < tolerance


def test_a_decode_step_is_one_dispatch():
    params, inputs = _inputs(14, 2, 1, 300, 64, 64, "shared")
    shaders = set(time_layer("SDPA", params, b"", inputs, runs=1, warmup=1))
    assert shaders == {"sdpa_decode"}


def test_long_key_rows_and_prefill_keep_three_steps():
    """Past DECODE_MAX_KEYS keys the three steps' many workgroups win; prefill rows too."""
    for case in ((2, 1, 1, sdpa.DECODE_MAX_KEYS + 1, 8, 8, None), (2, 1, sdpa.DECODE_MAX_ROWS + 1, 9, 8, 8, None)):
        shaders = set(time_layer("SDPA", *_inputs(*case)[:1], b"", _inputs(*case)[1], runs=1, warmup=1))
        assert "sdpa_decode" not in shaders and "sdpa_qk" in shaders, case


def test_keys_split_over_workgroups():
    """Every split holds keys, at least a workgroup's worth, at most DECODE_MAX_SPLITS."""
    local = 64
    for keys in (1, 63, 64, 127, 128, 300, 1500, 4096, 5000, 100000):
        splits, span = sdpa.decode_splits(keys, local)
        assert 1 <= splits <= sdpa.DECODE_MAX_SPLITS and (splits - 1) * span < keys <= splits * span, keys
        assert span >= min(keys, local), keys
    assert sdpa.decode_splits(300, local) == (4, 75)


def test_splits_masked_off_or_nan():
    """A split whose keys are all masked off adds nothing; a NaN score in one split makes its
    row NaN and leaves the other rows alone."""
    params, (q, k, v, m) = _inputs(4, 2, 2, 600, 16, 16, "per head")
    m[0, 0, :300] = -1e30                  # head 0, row 0: the first splits masked off
    m[1, 1, 500] = np.nan                  # head 1, row 1: one NaN in the last split
    want = run_layer("SDPA", params, b"", [q, k, v, m])[0]
    got = run_layer("SDPA", params, b"", [q, k, v, m], gpu=True, fp16=False)[0]
    assert np.isnan(got[1, 1]).all() and np.isnan(want[1, 1]).all()
    others_got, others_want = (np.delete(a.reshape(8, 16), 3, axis=0) for a in (got, want))  # row 3: head 1, row 1
    np.testing.assert_allclose(others_got, others_want, rtol=FP32_TOLERANCE, atol=FP32_TOLERANCE)


def test_the_host_knows_the_shaders_constants():
    """DECODE_MAX_D and DECODE_CHUNK restate sdpa_decode.comp's MAX_D and CHUNK: the host sizes
    the unrolled loops and picks the kernel by them."""
    source = (registry.SHADER_DIR / "sdpa_decode.comp").read_text()
    assert f"#define MAX_D {sdpa.DECODE_MAX_D}\n" in source and f"#define CHUNK {sdpa.DECODE_CHUNK}\n" in source
