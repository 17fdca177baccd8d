"""Text generation (vkncnn.llm, `vkncnn generate`) on the tiny model of tools/data/tiny_lm/.

The judges: torch's own logits for one text (reference.npz, written by the training tool),
real ncnn's logits, and each path's cached decode steps against a full prefill of the same
tokens. Real ncnn runs the decoder on whole sequences only (empty caches): its KV-cache
decode steps give non-finite values from Python in the pinned release.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import vkncnn
from vkncnn.errors import (
    ArgumentError,
    ArgumentTypeError,
    BlobNotFoundError,
    MatError,
    MemoryBudgetError,
    ModelFileError,
    ModelFormatError,
    ShapeError,
    TokenizerError,
)
from vkncnn.gpu import transfer_bytes
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.llm import (
    CharTokenizer,
    Decoder,
    Generator,
    MatCache,
    SamplingParams,
    causal_mask,
    decoder_step,
    device_step,
    load_generator,
    next_token,
    rope_tables,
)
from vkncnn.llm.generate import run_one
from vkncnn.tools import cli
from vkncnn.tools.cmd_generate import TINY_LM_DIR
from vkncnn.tools.ncnn_oracle import ncnn

PROMPT = "Return the "


@pytest.fixture(scope="module")
def gen() -> Generator:
    return load_generator(TINY_LM_DIR)


@pytest.fixture(scope="module")
def greedy(gen):
    return gen.generate(PROMPT, 24)


def full_prefill_logits(g: Generator, ids: list[int]) -> np.ndarray:
    return g.forward(ids, g.new_cache())[0]


# -- correctness against torch, real ncnn, and itself -----------------------------------------
def test_prefill_and_decode_steps_match_torch(gen):
    with np.load(TINY_LM_DIR / "reference.npz") as ref:
        ids, torch_logits = ref["ids"].tolist(), ref["logits"]
    logits, cache = gen.forward(ids[:5], gen.new_cache())
    errors = [np.abs(logits - torch_logits[4]).max()]
    for pos in range(5, len(ids)):
        logits, cache = gen.forward([ids[pos]], cache)
        errors.append(np.abs(logits - torch_logits[pos]).max())
    assert cache.length == len(ids)
    assert max(errors) < 1e-4, errors


def test_cached_decode_steps_equal_full_prefills(gen, greedy):
    ids = gen.tokenizer.encode(PROMPT)
    for k in (1, 5, 12, 23):
        full = full_prefill_logits(gen, ids + greedy.tokens[:k])
        np.testing.assert_allclose(greedy.logits[k], full, atol=1e-5)


def test_greedy_text_is_the_models_own(gen, greedy):
    assert greedy.stop_reason == "max_new_tokens" and len(greedy.tokens) == 24
    assert greedy.text == gen.tokenizer.decode(greedy.tokens)
    assert all(1 <= t < 97 for t in greedy.tokens)
    assert greedy.tokens == [int(np.argmax(lg)) for lg in greedy.logits]


def _real_ncnn_generator() -> Generator:
    nets = []
    for name in ("decoder", "proj_out", "embed"):
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        # fp32 like the reference; lightmode off: the pinned ncnn crashes in an in-place RMSNorm without it
        net.opt.lightmode = False
        net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
        net.opt.use_bf16_storage = False
        net.load_param(str(TINY_LM_DIR / f"{name}.ncnn.param"))
        net.load_model(str(TINY_LM_DIR / f"{name}.ncnn.bin"))
        nets.append(net)

    def mat(a=None):
        return ncnn.Mat() if a is None else ncnn.Mat(a).clone()  # ncnn's binding does not keep numpy alive
    return Generator(*nets, head_dim=32, vocab_size=97, mat_type=mat)


def test_matches_real_ncnn_logits(gen, greedy):
    real = _real_ncnn_generator()
    ids = gen.tokenizer.encode(PROMPT)
    np.testing.assert_allclose(real.embed(ids), gen.embed(ids), atol=0)
    for k in (0, 1, 2, 3, 8):  # the prefill, then decode steps (real ncnn: the same tokens, uncached)
        np.testing.assert_allclose(full_prefill_logits(real, ids + greedy.tokens[:k]), greedy.logits[k], atol=1e-4)


@pytest.fixture(scope="module")
def gpu_gen() -> Generator:
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    return load_generator(TINY_LM_DIR, gpu=True)  # fp32 storage


@pytest.mark.gpu
def test_gpu_path_generates_the_same_tokens(gpu_gen, greedy):
    assert gpu_gen.step is device_step  # the cache stays on the device
    result = gpu_gen.generate(PROMPT, 24)
    assert result.tokens == greedy.tokens
    np.testing.assert_allclose(np.array(result.logits), np.array(greedy.logits), atol=1e-3)
    # the GPU path's caches round-trip too: a step equals the whole sequence at once
    ids = gpu_gen.tokenizer.encode(PROMPT) + result.tokens[:6]
    np.testing.assert_allclose(full_prefill_logits(gpu_gen, ids), result.logits[6], atol=1e-3)
    # the pyncnn way, caches as Mats in and out, on the same GPU nets
    mats = Generator(gpu_gen.decoder, gpu_gen.proj_out, gpu_gen.embed, head_dim=32, step=decoder_step)
    assert mats.generate(gpu_gen.tokenizer.encode(PROMPT), 8).tokens == greedy.tokens[:8]


@pytest.mark.gpu
@pytest.mark.parametrize("flags, path", [([], "KV cache on the device"), (["--mat-cache"], "KV cache as Mats")])
def test_cli_generate_on_the_gpu(capsys, gpu_gen, greedy, flags, path):
    assert cli.main(["generate", PROMPT, "-n", "8", "--gpu", "--stats", *flags]) == 0
    captured = capsys.readouterr()
    assert captured.out == PROMPT + gpu_gen.tokenizer.decode(greedy.tokens[:8]) + "\n"
    assert f"GPU path, {path}" in captured.err


def _decode(dec: Decoder, gen: Generator, ids: list[int]) -> list[np.ndarray]:
    """Prefill ids[:7] (when nothing is cached), then one step per id after those cached: each
    step's last hidden row."""
    rows = []
    for chunk in ([ids[:7]] if dec.length == 0 else []) + [[t] for t in ids[max(dec.length, 7):]]:
        past, new = dec.length, len(chunk)
        cos, sin = rope_tables(past, new, 32, gen.rope_base)
        rows.append(dec.step(gen.embed(chunk), causal_mask(new, past), cos, sin)[-1])
    return rows


@pytest.mark.gpu
def test_device_cache_never_crosses_to_the_host(gpu_gen, greedy):
    ids = gpu_gen.tokenizer.encode(PROMPT) + greedy.tokens[:6]
    dec = Decoder(gpu_gen.decoder)
    _decode(dec, gpu_gen, ids[:9])  # prefill and two steps: plans recorded, pipelines made
    cache_bytes = sum(c.nbytes for c in dec.caches())
    past = dec.length
    cos, sin = rope_tables(past, 1, 32, gpu_gen.rope_base)
    embedding = gpu_gen.embed(ids[9:10])
    recorded = gpu_gen.decoder.gpu.plans_recorded
    up, down = transfer_bytes()
    hidden = dec.step(embedding, causal_mask(1, past), cos, sin)
    up, down = transfer_bytes()[0] - up, transfer_bytes()[1] - down
    # exactly the step's inputs (the mask padded to the capacity) and the write position go up,
    # exactly out0 comes down: not one byte of the cache
    assert up == embedding.nbytes + 4 * dec.capacity + cos.nbytes + sin.nbytes + 4
    assert down == hidden.nbytes == 128 * 4
    assert cache_bytes == 6 * 4 * past * 32 * 4 > up + down
    assert gpu_gen.decoder.gpu.plans_recorded == recorded  # the step replayed the plan of the one before
    # the pyncnn way moves the whole cache both ways at every step
    mats = Generator(gpu_gen.decoder, gpu_gen.proj_out, gpu_gen.embed, head_dim=32, step=decoder_step)
    _, cache = mats.forward(ids[:past], mats.new_cache())
    up, down = transfer_bytes()
    mats.forward(ids[past:past + 1], cache)
    assert transfer_bytes()[0] - up > cache_bytes and transfer_bytes()[1] - down > cache_bytes


@pytest.mark.gpu
def test_a_decoder_head_follows_the_step_on_the_device(gpu_gen, greedy):
    """Decoder(head=proj_out): step_head gives the logits step() and proj_out give; in a decode
    step proj_out reads the hidden state on the device (nothing of it goes up again), both
    plans replayed as one submission."""
    ids = gpu_gen.tokenizer.encode(PROMPT) + greedy.tokens[:5]
    plain = Decoder(gpu_gen.decoder, capacity=8, headroom=0)  # grown at the second step
    headed = Decoder(gpu_gen.decoder, capacity=8, headroom=0, head=gpu_gen.proj_out)
    want = [run_one(gpu_gen.proj_out, row[None]).reshape(-1) for row in _decode(plain, gpu_gen, ids)]
    got = []
    for chunk in [ids[:7]] + [[t] for t in ids[7:]]:
        past, new = headed.length, len(chunk)
        cos, sin = rope_tables(past, new, 32, gpu_gen.rope_base)
        recorded = gpu_gen.proj_out.gpu.plans_recorded
        up, down = transfer_bytes()
        embedding, capacity = gpu_gen.embed(chunk), headed.capacity
        got.append(headed.step_head(embedding, causal_mask(new, past), cos, sin).reshape(-1))
        if new == 1 and past > 7 and headed.capacity == capacity:  # a step like the one before: both replay
            # up: the decoder's inputs and the write position; down: its out0 and the logits
            assert transfer_bytes()[0] - up == embedding.nbytes + 4 * headed.capacity + cos.nbytes + sin.nbytes + 4
            assert transfer_bytes()[1] - down == 128 * 4 + got[-1].nbytes
            assert gpu_gen.proj_out.gpu.plans_recorded == recorded
    np.testing.assert_allclose(np.array(got), np.array(want), atol=1e-5)
    assert headed.length == plain.length == len(ids)
    with pytest.raises(ArgumentError, match="no head"):
        plain.step_head(gpu_gen.embed([3]), causal_mask(1, plain.length), *rope_tables(plain.length, 1, 32, 1e4))
    with pytest.raises(ArgumentError, match="head: the net is not on the GPU path"):
        Decoder(gpu_gen.decoder, head=load_generator(TINY_LM_DIR).proj_out)
    assert gpu_gen.new_cache().decoder.head is gpu_gen.proj_out  # what generate() uses


@pytest.mark.gpu
def test_device_cache_growing_past_its_headroom_gives_the_same_results(gen, gpu_gen, greedy):
    ids = gen.tokenizer.encode(PROMPT) + greedy.tokens
    want_cache = gen.new_cache()
    want = []
    for chunk in [ids[:7]] + [[t] for t in ids[7:]]:
        logits, want_cache = gen.forward(chunk, want_cache)
        want.append(logits)
    dec = Decoder(gpu_gen.decoder, capacity=8, headroom=0)  # grown by half at least: 12, 20, 32, 48
    rows = _decode(dec, gpu_gen, ids)
    assert dec.length == len(ids) == 35 and dec.capacity == 48
    logits = [run_one(gpu_gen.proj_out, row[None]).reshape(-1) for row in rows]
    np.testing.assert_allclose(np.array(logits), np.array(want), atol=1e-3)
    assert [int(np.argmax(lg)) for lg in logits[4:-1]] == greedy.tokens  # ids[:11] is the prompt
    # the caches hold what the numpy path's Mats hold, across the growths
    for got, mat in zip(dec.caches(), want_cache.mats):
        np.testing.assert_allclose(got, np.array(mat), atol=1e-4)


@pytest.mark.gpu
def test_device_cache_rows_a_truncated_sequence_left_count_for_nothing(gpu_gen, greedy):
    ids = gpu_gen.tokenizer.encode(PROMPT) + greedy.tokens[:4]
    want = _decode(Decoder(gpu_gen.decoder), gpu_gen, ids)
    dec = Decoder(gpu_gen.decoder)
    _decode(dec, gpu_gen, ids[:7])
    cos, sin = rope_tables(7, 6, 32, gpu_gen.rope_base)
    poisoned = dec.step(np.full((6, 128), np.nan, np.float32), causal_mask(6, 7), cos, sin)
    assert np.isnan(poisoned).all()  # rows 7..12 of the cache are NaN now
    dec.truncate(7)
    np.testing.assert_allclose(np.array(_decode(dec, gpu_gen, ids)), np.array(want[1:]), atol=1e-5)


@pytest.mark.gpu
def test_device_cache_states_and_misuse(gpu_gen, greedy):
    ids = gpu_gen.tokenizer.encode(PROMPT) + greedy.tokens[:3]
    logits, start = gpu_gen.forward(ids[:7], gpu_gen.new_cache())
    a, after_a = gpu_gen.forward(ids[7:8], start)
    b, _ = gpu_gen.forward(ids[7:8], start)  # an earlier state again: the step writes after its 7 tokens
    np.testing.assert_allclose(a, b, atol=1e-6)
    gpu_gen.forward([5], start)  # rewrites row 7, which after_a holds
    with pytest.raises(ArgumentError, match="is gone"):
        gpu_gen.forward(ids[8:9], after_a)
    with pytest.raises(ArgumentTypeError, match="DeviceCache"):
        gpu_gen.forward(ids[:2], MatCache([]))
    dec = start.decoder
    with pytest.raises(ShapeError, match="mask"):
        dec.step(gpu_gen.embed([3]), np.zeros((1, 3), np.float32), *rope_tables(0, 1, 32, 1e4))
    with pytest.raises(MatError, match="Decoder.step: cos needs a real-valued array"):
        dec.step(gpu_gen.embed([3]), np.zeros((1, dec.length + 1), np.float32), "cos", rope_tables(0, 1, 32, 1e4)[1])
    with pytest.raises(ArgumentError, match="GPU path"):
        Decoder(load_generator(TINY_LM_DIR).decoder)
    released = Decoder(gpu_gen.decoder)
    released.release()
    released.release()  # twice is harmless
    for use in (lambda: released.step(gpu_gen.embed([3]), np.zeros((1, 1), np.float32), *rope_tables(0, 1, 32, 1e4)),
                released.caches):
        with pytest.raises(ArgumentError, match="was released"):  # a TypeError from inside before
            use()
    with pytest.raises(MemoryBudgetError, match="Decoder: the record of its cache rows"):
        Decoder(gpu_gen.decoder, capacity=10**12)  # numpy's MemoryError came out before
    ex = load_generator(TINY_LM_DIR).decoder.create_extractor()
    with pytest.raises(ArgumentTypeError, match="GPU path"):
        ex.input("cache_k0", VkMat())


# -- sampling ---------------------------------------------------------------------------------
def test_sampling_is_reproducible_with_a_seed(gen):
    kw = dict(temperature=1.0, top_k=20, top_p=0.95, seed=7)
    first, again = gen.generate(PROMPT, 20, **kw).tokens, gen.generate(PROMPT, 20, **kw).tokens
    assert first == again
    others = {tuple(gen.generate(PROMPT, 20, **{**kw, "seed": s}).tokens) for s in range(4)}
    assert len(others) > 1  # the seed matters


def test_top_k_1_and_tiny_top_p_are_greedy(gen, greedy):
    assert gen.generate(PROMPT, 24, temperature=1.5, top_k=1, seed=3).tokens == greedy.tokens
    assert gen.generate(PROMPT, 24, temperature=1.5, top_p=1e-6, seed=3).tokens == greedy.tokens


def test_top_k_and_top_p_keep_only_the_likeliest():
    logits = np.log(np.array([0.05, 0.4, 0.3, 0.2, 0.05]))
    rng = np.random.default_rng(0)
    top2 = {next_token(logits, SamplingParams(temperature=1.0, top_k=2), rng) for _ in range(300)}
    assert top2 == {1, 2}
    # 0.4 + 0.3 = 0.7 reaches p = 0.65: tokens 1 and 2 only
    nucleus = {next_token(logits, SamplingParams(temperature=1.0, top_p=0.65), rng) for _ in range(300)}
    assert nucleus == {1, 2}
    everything = {next_token(logits, SamplingParams(temperature=1.0), rng) for _ in range(600)}
    assert everything == {0, 1, 2, 3, 4}


def test_logits_that_leave_no_choice_are_an_error_and_inf_takes_all():
    rng = np.random.default_rng(0)
    for params in (SamplingParams(), SamplingParams(temperature=1.0)):
        with pytest.raises(ArgumentError, match="NaN at token 2"):
            next_token(np.array([1.0, 2.0, np.nan, np.nan]), params, rng)
        with pytest.raises(ArgumentError, match="every one of the 3 tokens is -inf"):
            next_token(np.full(3, -np.inf), params, rng)
        with pytest.raises(ArgumentError, match="got none"):
            next_token(np.zeros(0), params, rng)
    # +inf takes all the probability, shared among the +inf tokens (numpy's sampling failed on it)
    drawn = {next_token(np.array([np.inf, 5.0, np.inf, 1.0]), SamplingParams(temperature=1.0), rng)
             for _ in range(200)}
    assert drawn == {0, 2}


def test_step_inputs_are_checked(gen):
    with pytest.raises(ArgumentError, match="past: expected an int >= 0"):
        rope_tables(-1, 3, 32, 1e4)
    with pytest.raises(ArgumentError, match="head_dim: expected a positive even int"):
        rope_tables(0, 3, 31, 1e4)
    for base in (0.0, float("nan"), float("inf"), True, "1e4"):
        with pytest.raises(ArgumentError, match="base: expected a finite number > 1"):
            rope_tables(0, 3, 32, base)
    with pytest.raises(MemoryBudgetError, match="rope_tables"):
        rope_tables(0, 10**12, 32, 1e4)  # numpy's MemoryError came out before
    with pytest.raises(ArgumentError, match="new: expected an int >= 0"):
        causal_mask(-1, 0)
    with pytest.raises(MemoryBudgetError, match="causal_mask"):
        causal_mask(10**6, 10**6)
    cos, sin = rope_tables(2, 1, 32, np.float32(1e4))  # a config's numpy scalar is a number too
    assert cos.shape == sin.shape == (1, 16) and causal_mask(1, 2).shape == (1, 3)
    # forward() checks its ids as generate() does: an id past the vocabulary was embedded before
    for ids, message in (([97], "below 97"), ([-1], "ints >= 0"), ([1.5], "ints >= 0"), ([], "at least one")):
        with pytest.raises(ArgumentError, match=message):
            gen.forward(ids, gen.new_cache())


def test_repetition_penalty_moves_away_from_repeats():
    logits = np.array([2.0, 1.9, -1.0])
    params = SamplingParams(repetition_penalty=1.5)
    assert next_token(logits, params, np.random.default_rng(0), history=[0]) == 1  # 2.0 / 1.5 < 1.9
    assert next_token(logits, SamplingParams(), np.random.default_rng(0), history=[0]) == 0


# -- stopping and streaming -------------------------------------------------------------------
def test_stop_tokens_stop_before_the_token(gen, greedy):
    stop = greedy.tokens[5]
    first = greedy.tokens.index(stop)
    result = gen.generate(PROMPT, 24, stop_tokens=[stop])
    assert result.tokens == greedy.tokens[:first] and result.stop_reason == "stop_token"
    assert gen.generate(PROMPT, 0).tokens == []


def test_streaming_yields_the_same_tokens(gen, greedy):
    assert list(gen.stream(PROMPT, 24)) == greedy.tokens
    seen = []
    assert gen.generate(PROMPT, 24, on_token=seen.append).tokens == greedy.tokens
    assert seen == greedy.tokens
    kw = dict(temperature=0.9, top_k=10, seed=11)
    assert list(gen.stream(PROMPT, 16, **kw)) == gen.generate(PROMPT, 16, **kw).tokens


# -- bad arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error", [
    (dict(temperature=-1.0), ArgumentError),
    (dict(temperature=float("nan")), ArgumentError),
    (dict(top_k=-1), ArgumentError),
    (dict(top_k=2.5), ArgumentTypeError),
    (dict(top_p=0.0), ArgumentError),
    (dict(top_p=1.5), ArgumentError),
    (dict(repetition_penalty=0.0), ArgumentError),
    (dict(seed="x"), ArgumentTypeError),
    (dict(stop_tokens=[97]), ArgumentError),
    (dict(stop_tokens="ab"), ArgumentTypeError),
])
def test_bad_sampling_arguments(gen, kwargs, error):
    with pytest.raises(error):
        gen.stream(PROMPT, 4, **kwargs)


def test_bad_prompts_and_lengths(gen):
    with pytest.raises(TokenizerError, match="position 3"):
        gen.generate("abc\u00e9", 4)
    with pytest.raises(ArgumentError, match="at least one token"):
        gen.generate("", 4)
    with pytest.raises(ArgumentError, match="token ids"):
        gen.generate([5, 200], 4)
    with pytest.raises(ArgumentError, match="max_new_tokens"):
        gen.generate(PROMPT, -1)
    with pytest.raises(ArgumentError, match="context of 1024"):
        gen.generate(PROMPT, 5000)
    assert issubclass(TokenizerError, vkncnn.Error)


def test_bad_models(tmp_path, gen):
    with pytest.raises(ModelFileError, match="model directory"):
        load_generator(tmp_path / "missing")
    # a config whose vocabulary outgrows the embedding: its ids would be clamped to the last row
    shutil.copytree(TINY_LM_DIR, tmp_path / "wide")
    config = json.loads((tmp_path / "wide" / "config.json").read_text())
    (tmp_path / "wide" / "config.json").write_text(json.dumps({**config, "vocab_size": 1000}))
    with pytest.raises(ModelFormatError, match="vocab_size 1000 is more than the 97 rows of the embedding"):
        load_generator(tmp_path / "wide")
    with pytest.raises(BlobNotFoundError, match="decoder form"):
        Generator(gen.proj_out, gen.proj_out, gen.embed, head_dim=32)  # proj_out is no decoder
    with pytest.raises(ArgumentError, match="head_dim"):
        Generator(gen.decoder, gen.proj_out, gen.embed, head_dim=31)
    with pytest.raises(ArgumentTypeError, match="embedding"):
        Generator(gen.decoder, gen.proj_out, "table", head_dim=32)
    for base in (float("inf") * 0, float("inf")):  # an infinite base passed before
        with pytest.raises(ArgumentError, match="rope_base"):
            Generator(gen.decoder, gen.proj_out, gen.embed, head_dim=32, rope_base=base)
    assert Generator(gen.decoder, gen.proj_out, gen.embed, head_dim=32, rope_base=np.float32(5e5)).rope_base == 5e5
    with pytest.raises(ArgumentTypeError, match="tokenizer"):
        Generator(gen.decoder, gen.proj_out, gen.embed, head_dim=32, tokenizer=str)
    with pytest.raises(ShapeError, match="expected \\(3, hidden\\)"):
        Generator(gen.decoder, gen.proj_out, lambda ids: np.zeros((1, 128)), head_dim=32).generate([1, 2, 3], 2)


def test_an_embedding_table_and_a_tokenizer_of_callables(gen, greedy):
    table = np.stack([gen.embed([i])[0] for i in range(97)])
    before = table.copy()
    g = Generator(gen.decoder, gen.proj_out, table, head_dim=32, tokenizer=CharTokenizer.from_file(
        TINY_LM_DIR / "tokenizer.json"))
    table[:] = 0  # the generator keeps its own copy
    assert g.generate(PROMPT, 24).tokens == greedy.tokens
    assert not np.array_equal(table, before)


# -- the command line -------------------------------------------------------------------------
def test_cli_generate(capsys, gen, greedy):
    assert cli.main(["generate", PROMPT, "-n", "24"]) == 0
    assert capsys.readouterr().out == PROMPT + greedy.text + "\n"
    assert cli.main(["generate", PROMPT, "-n", "24", "--stream", "--cpu"]) == 0
    assert capsys.readouterr().out == PROMPT + greedy.text + "\n"
    sampled = gen.generate_text(PROMPT, 20, temperature=0.8, top_k=5, top_p=0.9, seed=2)
    assert cli.main(["generate", PROMPT, "-n", "20", "-t", "0.8", "--top-k", "5", "--top-p", "0.9",
                     "--seed", "2"]) == 0
    assert capsys.readouterr().out == PROMPT + sampled + "\n"


@pytest.mark.parametrize("args, message", [
    (["\u00e9"], "not in the alphabet"),
    (["x", "--top-p", "0"], "top_p"),
    (["x", "--model", "/nonexistent/dir"], "model directory"),
])
def test_cli_generate_failures(capsys, args, message):
    assert cli.main(["generate", *args]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # not even the prompt: arguments are checked first


@pytest.mark.parametrize("args", [["x", "-n", "-1"], ["x", "--temperature", "warm"], []])
def test_cli_generate_usage_errors(capsys, args):
    with pytest.raises(SystemExit) as e:
        cli.main(["generate", *args])
    assert e.value.code == 2
    assert "usage: vkncnn generate" in capsys.readouterr().err
