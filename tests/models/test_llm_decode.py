"""LLM decoders decoding through their KV cache: a prefill, then one-token steps fed the
caches of the step before (Mats in, Mats out, as a pyncnn user drives them).

The decoders run cut to their first blocks (tools/llm_truncate.py) with seeded random
weights, so a case takes seconds; `-m slow` adds every decoder, and full depth.

- GPU path vs numpy path, fp32 storage (1e-3) and fp16 storage (3e-2).
- numpy path vs real ncnn. Real ncnn's own cache path is no oracle here: the pinned
  wheel's x86 SDPA returns cache Mats whose rows after the first are wrong and decodes
  wrongly from them, and on Vulkan its cache Mats come back packed (elempack 4), which
  the binding's numpy conversion crashes on (docs/llm.md).
  What real ncnn computes right is out0 of a prefill: with a causal mask, one prefill of
  all the tokens gives the rows that the steps give one after another. So the steps'
  rows are checked against real ncnn's prefill of them all, and the caches against our
  own one-shot prefill (exact: the caches are the keys and values, only split in time).
"""

from collections import Counter

import numpy as np
import pytest

from tests.gpu.fold_support import merges_in_the_product
from vkncnn.gpu.ops import matrix_product
from vkncnn.gpu.ops.row_reduction import use_subgroups
from vkncnn.gpu.ops.split_records import SplitRecords
from vkncnn.layers import gemm, sdpa
from vkncnn.llm import Decoder
from vkncnn.testing import rel_err
from vkncnn.tools.benchmark_models import LLM_MODELS, llm_decoder_path
from vkncnn.tools.llm_steps import NcnnDecoder, VkncnnDecoder, joined_feed, run_steps, sequence_feeds
from vkncnn.tools.llm_truncate import truncate_decoder_file
from vkncnn.tools.ncnn_oracle import ncnn
from vkncnn.tools.randweights import random_weights

PREFILL, STEPS = 5, 3
FAST = ("qwen2.5_0.5b", "llama3.2_1b")  # a qwen and a llama-style decoder run by default
FAST_GPU = ("qwen2.5_0.5b",)  # on lavapipe the llama-style one takes 15 s: -m slow
# with the caches on the device, qwen3 and hunyuan too: their per-head q and k norms fold into
# the attention, qwen3's with the RoPE after them, hunyuan's without (the RoPE comes first);
# qwen3's 8 kv heads' repeat folds into the cache write (1.5 s and 3.5 s)
FAST_DEVICE_CACHE = ("qwen2.5_0.5b", "qwen3_0.6b", "hunyuan_0.5b_instruct")


def _models(blocks, fast=FAST):
    return [pytest.param(n, blocks, marks=() if n in fast and blocks else pytest.mark.slow, id=f"{n}-{blocks or 'all'}")
            for n in LLM_MODELS]


_cache: dict = {}


def _decoder(name: str, blocks: int | None, tmp_path_factory) -> tuple[str, bytes]:
    """The (cut) decoder's .param path and its seeded random weights, made once per session."""
    key = (name, blocks)
    if key not in _cache:
        _cache.clear()  # full-depth weights are GBs: hold one model's at a time
        path = str(llm_decoder_path(name))
        if blocks:
            path = str(tmp_path_factory.mktemp("llm") / f"{name}_{blocks}.param")
            with open(path, "w") as f:
                f.write(truncate_decoder_file(str(llm_decoder_path(name)), blocks))
        _cache[key] = (path, random_weights(path, seed=0))
    return _cache[key]


@pytest.mark.gpu
@pytest.mark.parametrize("fp16,tol", [(False, 1e-3), (True, 3e-2)], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name,blocks", _models(2, FAST_GPU) + _models(None))
def test_gpu_decode_matches_numpy(name, blocks, fp16, tol, tmp_path_factory):
    path, weights = _decoder(name, blocks, tmp_path_factory)
    feeds = sequence_feeds(name, [PREFILL] + [1] * STEPS)
    want_rows, want_caches = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)
    gpu = VkncnnDecoder(path, weights, gpu=True, fp16=fp16)
    if gpu.net.gpu is None:
        pytest.skip("no Vulkan device")
    rows, caches = run_steps(gpu, feeds)
    assert [r.shape for r in rows] == [(PREFILL, LLM_MODELS[name][0])] + [(1, LLM_MODELS[name][0])] * STEPS
    for step, (got, want) in enumerate(zip(rows, want_rows)):
        assert rel_err(got, want) <= tol, f"out0 of step {step}"
    assert len(caches) == len(want_caches) == 2 * (blocks or len(want_caches) // 2)
    for i, (got, want) in enumerate(zip(caches, want_caches)):
        assert got.shape[1] == PREFILL + STEPS
        assert rel_err(got, want) <= tol, f"cache {gpu.caches[i]}"


@pytest.mark.gpu
@pytest.mark.parametrize("fp16,tol", [pytest.param(False, 1e-3, marks=pytest.mark.slow), (True, 3e-2)],
                         ids=["fp32", "fp16"])  # fp32: tests/test_generate.py runs the tiny model so
@pytest.mark.parametrize("name,blocks", _models(2, FAST_DEVICE_CACHE) + _models(None))
def test_gpu_device_cache_decode_matches_numpy(name, blocks, fp16, tol, tmp_path_factory):
    """The caches kept on the device (vkncnn.llm.Decoder), grown past their headroom on the way."""
    path, weights = _decoder(name, blocks, tmp_path_factory)
    lengths = [PREFILL] + [1] * (STEPS + 2)
    feeds = sequence_feeds(name, lengths)
    want_rows, want_caches = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)
    gpu = VkncnnDecoder(path, weights, gpu=True, fp16=fp16)
    if gpu.net.gpu is None:
        pytest.skip("no Vulkan device")
    dec = Decoder(gpu.net, capacity=8, headroom=0)  # 8 rows, grown to 12 at the fourth step
    rows = [dec.step(f["in0"], f["in1"], f["in2"], f["in3"]) for f in feeds]
    assert dec.length == 10 and dec.capacity == 12
    for step, (got, want) in enumerate(zip(rows, want_rows)):
        assert rel_err(got, want) <= tol, f"out0 of step {step}"
    for name_, got, want in zip(dec.cache_names, dec.caches(), want_caches):
        assert got.shape == want.shape and rel_err(got, want) <= tol, f"cache {name_}"


@pytest.mark.gpu
@pytest.mark.parametrize("fp16,tol", [(False, 1e-3), (True, 3e-2)], ids=["fp32", "fp16"])
def test_device_cache_steps_of_a_few_tokens(fp16, tol, tmp_path_factory):
    """Steps of 2 to 4 tokens (a short prompt, a draft's tokens): the one attention dispatch
    writes them all into the cache and each row sees the new rows its mask allows."""
    path, weights = _decoder("qwen2.5_0.5b", 2, tmp_path_factory)
    feeds = sequence_feeds("qwen2.5_0.5b", [3, 2, 4, 1])
    want_rows, want_caches = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)
    gpu = VkncnnDecoder(path, weights, gpu=True, fp16=fp16)
    if gpu.net.gpu is None:
        pytest.skip("no Vulkan device")
    dec = Decoder(gpu.net, capacity=6, headroom=0)  # grown at the third step
    rows = [dec.step(f["in0"], f["in1"], f["in2"], f["in3"]) for f in feeds]
    assert dec.length == 10
    for step, (got, want) in enumerate(zip(rows, want_rows)):
        assert rel_err(got, want) <= tol, f"out0 of step {step}"
    for name_, got, want in zip(dec.cache_names, dec.caches(), want_caches):
        assert got.shape == want.shape and rel_err(got, want) <= tol, f"cache {name_}"


@pytest.mark.gpu
@pytest.mark.parametrize("name,fp16,tol", [("qwen2.5_0.5b", False, 1e-3), ("qwen2.5_0.5b", True, 3e-2),
                                           ("qwen3_0.6b", True, 3e-2)],
                         ids=["qwen2.5-fp32", "qwen2.5-fp16", "qwen3-fp16"])
def test_device_cache_split_keys_merged_by_the_o_projection(name, fp16, tol, tmp_path_factory, monkeypatch):
    """A cache of 256 rows: the attention reads them all (the mask hides those past the
    length), so each head's keys split over several workgroups (4 at head width 64, 8 at
    128). The o projection then merges the splits as it reads the attention's output (a
    SplitRecords) where they are few enough to pay (qwen2.5's 4 of 896 values, qwen3's 8 of
    2048; again with the bound on them raised): the steps match the numpy path, as they do
    with the attention merging the splits itself (DECODE_MERGE_BY_READER=0)."""
    path, weights = _decoder(name, 2, tmp_path_factory)
    feeds = sequence_feeds(name, [PREFILL, 1, 1])
    want_rows, _ = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)
    merging = []  # per matrix-vector product recorded: did it read an attention's splits?
    record_gemv = matrix_product.record_gemv
    monkeypatch.setattr(gemm, "record_gemv", lambda layer, cmd, fp16_, x, *a, **k: (
        merging.append(isinstance(x, SplitRecords)), record_gemv(layer, cmd, fp16_, x, *a, **k))[1])
    heads, dv = {"qwen2.5_0.5b": (14, 64), "qwen3_0.6b": (16, 128)}[name]
    for by_reader, most_values in ((1, matrix_product.GEMV_MERGE_MAX_VALUES), (1, 1 << 20), (0, 1 << 20)):
        monkeypatch.setattr(sdpa, "DECODE_MERGE_BY_READER", by_reader)
        monkeypatch.setattr(matrix_product, "GEMV_MERGE_MAX_VALUES", most_values)
        gpu = VkncnnDecoder(path, weights, gpu=True, fp16=fp16)
        if gpu.net.gpu is None:
            pytest.skip("no Vulkan device")
        dec = Decoder(gpu.net, capacity=256)
        merging.clear()
        rows = [dec.step(f["in0"], f["in1"], f["in2"], f["in3"]) for f in feeds]
        for step, (got, want) in enumerate(zip(rows, want_rows)):
            assert rel_err(got, want) <= tol, f"out0 of step {step}, by the reader {by_reader} to {most_values}"
        # the one-token plan's two o projections (the prefill's 5 rows take the three steps)
        assert merging.count(True) == (2 if by_reader and merges_in_the_product(heads, dv, 256) else 0)


@pytest.mark.gpu
@pytest.mark.parametrize("name,forms", [("qwen2.5_0.5b", {4, 7, 9}), ("qwen3_0.6b", {4, 7})])
def test_device_cache_decode_by_either_reduction(name, forms, tmp_path_factory, monkeypatch):
    """The matrix-vector kernel adds a row's partial sums, and the one-row attention its
    maxima and sums, by subgroup shuffles where the device has them (GEMV_SUBGROUP,
    DECODE_SUBGROUP), else in shared-memory trees: both give the numpy path's steps, through
    every form a decode step takes (products plain, with a folded norm or gate, with a RoPE
    (qwen2.5), merging the attention's splits; qwen3's attention norms and rotates q and k
    itself). A cache of 256 rows splits each head's keys; the 40 cached tokens lie across
    several subgroups of the first split (and, at qwen3's width of 128, two splits)."""
    path, weights = _decoder(name, 2, tmp_path_factory)
    feeds = sequence_feeds(name, [40, 1, 1])
    want_rows, _ = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)
    made = []  # (shader, SUBGROUP, BINDINGS, MERGE) of each pipeline asked for
    pipelines = {module: module.shader_pipeline for module in (matrix_product, sdpa)}

    def recording(module):
        def make(vkdev, shader, *args, **kwargs):
            if shader in ("innerproduct_gemv", "sdpa_decode"):
                made.append((shader,) + tuple(args[-1].get(d, 0) for d in ("SUBGROUP", "BINDINGS", "MERGE")))
            return pipelines[module](vkdev, shader, *args, **kwargs)
        return make

    for module in pipelines:
        monkeypatch.setattr(module, "shader_pipeline", recording(module))
    heads, dv = {"qwen2.5_0.5b": (14, 64), "qwen3_0.6b": (16, 128)}[name]
    for by_subgroups in (1, 0):
        monkeypatch.setattr(matrix_product, "GEMV_SUBGROUP", by_subgroups)
        monkeypatch.setattr(sdpa, "DECODE_SUBGROUP", by_subgroups)
        made.clear()
        gpu = VkncnnDecoder(path, weights, gpu=True, fp16=False)
        if gpu.net.gpu is None:
            pytest.skip("no Vulkan device")
        dec = Decoder(gpu.net, capacity=256)
        rows = [dec.step(f["in0"], f["in1"], f["in2"], f["in3"]) for f in feeds]
        for step, (got, want) in enumerate(zip(rows, want_rows)):
            assert rel_err(got, want) <= 1e-3, f"out0 of step {step}, subgroups {by_subgroups}"
        vkdev = gpu.net.gpu.vkdev
        lx, ly = matrix_product.gemv_workgroup(vkdev, 896)
        shuffles = {"innerproduct_gemv": bool(by_subgroups and use_subgroups(vkdev, gpu.net.opt, lx * ly)),
                    "sdpa_decode": bool(by_subgroups and sdpa.decode_subgroups(vkdev, gpu.net.opt,
                                                                                sdpa.decode_local(vkdev)))}
        for shader, want_subgroups in shuffles.items():
            assert {sub for s, sub, _, _ in made if s == shader} == {int(want_subgroups)}, made
        products = [(binds, merge) for s, _, binds, merge in made if s == "innerproduct_gemv"]
        assert {binds for binds, _ in products} >= forms, made
        assert any(merge for _, merge in products) == merges_in_the_product(heads, dv, 256), made


# the layers that dispatch in a decode step of 2 blocks, by type (a label per layer and shader)
STEP_DISPATCHES = {
    # per block q and k (each with its RoPE), v, o, gate (with up and their product) and down
    # products and one attention dispatch, which also writes the caches; the norms, the RoPEs,
    # the kv-head Tiles, the residual adds and the multiply fold away (the final norm, read
    # by no product, stays)
    "qwen2.5_0.5b": {"Gemm": 12, "SDPA": 2, "RMSNorm": 1},
    # q and k normed per head after their products, then rotated: the attention normalises
    # and rotates its q row and the step's key row itself
    "qwen3_0.6b": {"Gemm": 12, "SDPA": 2, "RMSNorm": 1},
    # the RoPEs fold into the products, the per-head norms after them into the attention
    "hunyuan_0.5b_instruct": {"Gemm": 12, "SDPA": 2, "RMSNorm": 1},
    # each block's outputs scaled before their residual sums: both fold into the products
    "minicpm4_0.5b": {"Gemm": 12, "SDPA": 2, "RMSNorm": 1},
    # latent attention: the heads sliced, rotated, tiled and joined by copies that keep them
    # pack1, as the attention reads them (no packing dispatch before it)
    "youtu_llm_2b": {"Gemm": 14, "SDPA": 2, "RMSNorm": 1, "Slice": 6, "RotaryEmbed": 4, "Tile": 2, "Concat": 4},
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(STEP_DISPATCHES))
def test_device_cache_decode_step_folds(name, tmp_path_factory):
    """A decode step with the caches on the device records only the dispatches STEP_DISPATCHES
    names: one shader per layer, no packing conversions, a single attention dispatch."""
    path, weights = _decoder(name, 2, tmp_path_factory)
    gpu = VkncnnDecoder(path, weights, gpu=True, fp16=True)
    if gpu.net.gpu is None:
        pytest.skip("no Vulkan device")
    dec = Decoder(gpu.net, capacity=16)
    feeds = sequence_feeds(name, [PREFILL, 1, 1])
    for f in feeds[:2]:
        dec.step(f["in0"], f["in1"], f["in2"], f["in3"])
    gpu.net.gpu.release_plans()  # a cached plan replays without timestamps
    gpu.net.gpu.profile = "dispatches"
    f = feeds[2]
    dec.step(f["in0"], f["in1"], f["in2"], f["in3"])
    labels = list(gpu.net.gpu.layer_times)  # "Type name shader", one per layer and shader
    layers = Counter(label.split()[0] for label in labels)
    assert {label.split()[-1] for label in labels if label.startswith("SDPA")} == {"sdpa_decode"}
    assert layers == STEP_DISPATCHES[name], labels


@pytest.mark.parametrize("name,blocks", _models(2) + _models(None))
def test_numpy_decode_matches_ncnn_prefill_of_all_tokens(name, blocks, tmp_path_factory):
    if ncnn is None:
        pytest.skip("real ncnn not installed")
    path, weights = _decoder(name, blocks, tmp_path_factory)
    feeds = sequence_feeds(name, [PREFILL] + [1] * STEPS)
    rows, caches = run_steps(VkncnnDecoder(path, weights, gpu=False, fp16=False), feeds)

    ref = NcnnDecoder(path, weights, gpu=False, fp16=False, threads=1)
    ref_hidden, _, _ = ref.step(joined_feed(feeds), ref.empty_caches())
    ref_rows = np.array(ref_hidden)
    assert rel_err(np.concatenate(rows), ref_rows) <= 1e-3
    assert rel_err(rows[-1], ref_rows[-1:]) <= 1e-3  # the last decode step alone, not drowned in the prefill
    ref.close()


def test_decode_steps_equal_one_prefill_on_numpy(tmp_path_factory):
    """The cache is exact: key caches too (which real ncnn cannot vouch for) equal those of one prefill."""
    path, weights = _decoder("qwen2.5_0.5b", 2, tmp_path_factory)
    feeds = sequence_feeds("qwen2.5_0.5b", [PREFILL] + [1] * STEPS)
    dec = VkncnnDecoder(path, weights, gpu=False, fp16=False)
    rows, caches = run_steps(dec, feeds)
    whole_rows, whole_caches = run_steps(dec, [joined_feed(feeds)])
    assert rel_err(np.concatenate(rows), whole_rows[0]) <= 1e-4
    for got, want in zip(caches, whole_caches):
        assert rel_err(got, want) <= 1e-5
