"""vkncnn bench --llm: a tiny run (one block, a 1000-logit proj_out, a few tokens) against real ncnn."""

import json
from types import SimpleNamespace

import pytest

from vkncnn.tools import cli
from vkncnn.tools.ncnn_oracle import ncnn

TINY = ["bench", "--llm", "--models", "qwen2.5_0.5b", "--blocks", "1", "--vocab", "1000", "--prefill", "6",
        "--past", "5", "--steps", "3", "--loops", "2", "--warmup", "1", "--warmup-s", "0.1", "--block", "2",
        "--settle-ms", "0", "--rewarm-ms", "10", "--compare-ncnn", "--bandwidth-gbs", "100"]


def _run(tmp_path, capsys, device: list[str]) -> dict:
    out = tmp_path / "llm.json"
    assert cli.main(TINY + device + ["--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "qwen2.5_0.5b" in table and "decode tok/s" in table
    (r,) = json.loads(out.read_text())
    assert r["model"] == "qwen2.5_0.5b" and (r["prefill"], r["past"], r["blocks"]) == (6, 5, 1)
    assert (r["block"], r["warmup_s"], r["settle_ms"], r["rewarm_ms"]) == (2, 0.1, 0.0, 10.0)
    for who in ("vkncnn", "ncnn"):
        for case, tokens in (("prefill", 6), ("decode", 1)):
            ms = r[f"{who}_{case}_median_ms"]
            assert 0 < ms < 60_000
            assert r[f"{who}_{case}_tokens_per_s"] == pytest.approx(tokens * 1e3 / ms)
        assert r[f"{who}_decode_x_floor"] == pytest.approx(r[f"{who}_decode_median_ms"] / r["decode_floor_ms"])
    assert r["floor_gbs"] == 100 and "floor at 100 GB/s (given)" in table
    for case in ("prefill", "decode"):
        assert r[f"{case}_ratio"] == pytest.approx(r[f"vkncnn_{case}_tokens_per_s"] / r[f"ncnn_{case}_tokens_per_s"])
    # one block of qwen2.5 (896 wide, 4864 MLP, 128-wide k/v) plus its norms, and 1000 x 896 logits, in fp32
    weights = 896 * 896 * 2 + 896 * 128 * 2 + 128 * 2 + 896 + 3 * 896 * 4864 + 2 * 896 + 896 + 1000 * 896
    assert weights * 4 <= r["weight_bytes_fp32"] <= weights * 4 + 4096  # + the .bin's flag words
    return r


def test_llm_bench_cpu_against_ncnn(tmp_path, capsys):
    if ncnn is None:
        pytest.skip("real ncnn not installed")
    r = _run(tmp_path, capsys, ["--cpu"])
    assert r["decode_floor_ms"] == pytest.approx(r["weight_bytes_fp32"] / 100e9 * 1e3)  # fp32 on the CPU


@pytest.mark.gpu
def test_llm_bench_gpu_against_ncnn(tmp_path, capsys):
    import vkncnn

    if ncnn is None:
        pytest.skip("real ncnn not installed")
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    r = _run(tmp_path, capsys, ["--gpu", "--compare-mat-cache"])
    assert r["decode_floor_ms"] == pytest.approx(r["weight_bytes_fp32"] / 2 / 100e9 * 1e3)  # fp16 storage
    # ours with the caches on the device, and again with them as Mats
    assert r["vkncnn_kv_cache"] == "device"
    assert r["mat_cache_decode_gain"] == pytest.approx(r["vkncnn_decode_tokens_per_s"]
                                                       / r["vkncnn_mats_decode_tokens_per_s"])


@pytest.mark.parametrize("name,gbs", [("NVIDIA H100 80GB HBM3", 3350), ("NVIDIA H100 PCIe", 2000),
                                      ("NVIDIA H200", 4800), ("llvmpipe (LLVM 15.0.6, 256 bits)", 4800)])
def test_the_floor_is_the_gpus_bandwidth_where_known(monkeypatch, name, gbs):
    import vkncnn
    from vkncnn.tools.llm_bench import floor_bandwidth

    monkeypatch.setattr(vkncnn, "get_gpu_info", lambda index: SimpleNamespace(device_name=lambda: name))
    got, source = floor_bandwidth(SimpleNamespace(bandwidth_gbs=None, gpu=True, device=0))
    assert got == gbs
    assert (name in source) == (gbs != 4800 or "H200" in name)
    assert floor_bandwidth(SimpleNamespace(bandwidth_gbs=20.0, gpu=True, device=0)) == (20.0, "given")
    assert floor_bandwidth(SimpleNamespace(bandwidth_gbs=None, gpu=False, device=0))[0] == 4800


def test_llm_bench_rejects_unknown_decoder(capsys):
    assert cli.main(["bench", "--llm", "--models", "gpt2"]) == 1
    assert "unknown decoder gpt2" in capsys.readouterr().err


def test_llm_bench_reports_a_case_over_the_memory_budget(capsys):
    # a billion cached tokens: the step's mask alone would be 4 GB a row of queries
    code = cli.main(["bench", "--llm", "--cpu", "--models", "qwen2.5_0.5b", "--blocks", "1", "--vocab", "64",
                     "--past", "1000000000", "--loops", "1"])
    out = capsys.readouterr().out
    assert code == 1 and "failed: MemoryBudgetError: qwen2.5_0.5b: the step's mask" in out


@pytest.mark.gpu
def test_decode_ab_times_each_setting_and_restores_the_defaults(capsys):
    import vkncnn
    from vkncnn.gpu.ops import matrix_product
    from vkncnn.layers import sdpa
    from vkncnn.tools.dev import decode_ab

    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    defaults = (matrix_product.GEMV_STEPS, sdpa.DECODE_MAX_KEYS)
    # options between the model and the settings, as the docs write them
    assert decode_ab.main(["qwen2.5_0.5b", "--blocks", "1", "--vocab", "64", "--past", "5", "-",
                           "GEMV_STEPS=2,DECODE_MAX_KEYS=4", "--rounds", "1", "--steps", "2", "--warmup-s", "0"]) == 0
    out = capsys.readouterr().out
    assert "(1.000x the first)" in out and "GEMV_STEPS=2,DECODE_MAX_KEYS=4 " in out
    # each setting's host part: a time, less than its whole step
    for line in out.splitlines()[1:3]:
        step, host = float(line.split(" step ")[1].split()[0]), float(line.split(" host ")[1])
        assert 0 < host < step, line
    # each setting's outputs against the first's, and between repeats of one step
    agreement = [line for line in out.splitlines() if " outputs: max |diff| " in line]
    assert [line.split()[0] for line in agreement] == ["-", "GEMV_STEPS=2,DECODE_MAX_KEYS=4"]
    for line in agreement:
        parts = line.split(" |diff| ")[1].split(" against the first setting, ")
        against, spread = (float(part.split()[0]) for part in parts)
        assert spread == 0 and against < 1e-2, line
    assert " |diff| 0 against" in agreement[0]
    profiled = out.split("profile of")[1]  # the first setting's: the attention is one dispatch
    assert "sdpa_decode" in profiled and "innerproduct_gemv" in profiled
    assert (matrix_product.GEMV_STEPS, sdpa.DECODE_MAX_KEYS) == defaults
    with pytest.raises(SystemExit, match="NAME=INT"):
        decode_ab.parse_setting("GEMV_STEP=4")


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["relu", "relu,sigmoid", "ip 896x896", "sdpa 14x384x64"])
def test_dispatch_chain_nets_compute_what_their_layers_do(case):
    """The chains dispatch_chain times are real nets: on the GPU they give the numpy path's
    output, and the two lengths differ by the links they add."""
    import numpy as np

    import vkncnn
    from vkncnn.tools.dev import dispatch_chain

    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    outputs = []
    for gpu in (False, True):
        chain = dispatch_chain.chain_net(dispatch_chain.CASES[case], 2, fp16=False)
        chain.net.opt.use_vulkan_compute = gpu
        outputs.append(chain.run())
    assert np.isfinite(outputs[0]).all() and np.abs(outputs[0]).max() > 0
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-4, atol=1e-4)
    links = len(dispatch_chain.CASES[case])
    assert chain.output == f"b{2 * links}"


@pytest.mark.gpu
def test_dispatch_chain_prints_the_cost_of_one_link(capsys):
    import vkncnn
    from vkncnn.tools.dev import dispatch_chain

    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    assert dispatch_chain.main(["--short", "1", "--long", "3", "--loops", "2", "--warmup-s", "0",
                                "--cases", "relu", "--set", "DECODE_LOCAL=64"]) == 0
    out = capsys.readouterr().out
    assert "settings: DECODE_LOCAL=64" in out
    # "relu  1:  S ms  3:  L ms  C us a dispatch": C is (L - S) over the 2 links between
    words = next(line for line in out.splitlines() if line.startswith("relu")).split()
    short, long, cost = float(words[2]), float(words[5]), float(words[7])
    assert cost == pytest.approx((long - short) / 2 * 1e3, abs=0.6)
