"""vkncnn bench: the interleaving and the figures it reports (no timing is asserted)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from vkncnn.tools import bench
from vkncnn.tools.interleave import warm_up


class FakeRunner:
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def infer(self, x) -> None:
        self.log.append(self.name)


def test_interleaves_in_blocks():
    log: list = []
    runners = [FakeRunner("a", log), FakeRunner("b", log)]
    times = bench.time_interleaved(runners, np.zeros(1), loops=5, block=2, settle_s=0.0)
    assert log == list("aabbaabbab")
    assert [len(times["a"]), len(times["b"])] == [5, 5]
    assert all(t >= 0 for ts in times.values() for t in ts)


def test_loop_by_loop():
    log: list = []
    bench.time_interleaved([FakeRunner("a", log), FakeRunner("b", log)], np.zeros(1), 3, 1, 0.0)
    assert log == list("ababab")


def test_rewarm_runs_untimed_before_each_block():
    log: list = []

    class SlowRunner(FakeRunner):
        def infer(self, x) -> None:
            time.sleep(0.002)  # longer than the re-warm: exactly one untimed inference a block
            super().infer(x)

    times = bench.time_interleaved([SlowRunner("a", log), SlowRunner("b", log)], np.zeros(1), loops=3, block=2,
                                   settle_s=0.0, rewarm_s=0.001)
    assert log == list("aaabbbaabb")  # each block: one re-warm, then the timed loops
    assert [len(times["a"]), len(times["b"])] == [3, 3]


@pytest.mark.parametrize("gpu,want", [(True, (10, 2.0, 0.0, 300.0)), (False, (5, 0.0, 300.0, 0.0))])
def test_timing_defaults_by_device_keep_what_was_given(gpu, want):
    from types import SimpleNamespace

    from vkncnn.tools.interleave import set_timing_defaults

    args = SimpleNamespace(gpu=gpu, block=None, warmup_s=None, settle_ms=None, rewarm_ms=None)
    set_timing_defaults(args)
    assert (args.block, args.warmup_s, args.settle_ms, args.rewarm_ms) == want
    given = SimpleNamespace(gpu=gpu, block=1, warmup_s=0.5, settle_ms=7.0, rewarm_ms=0.0)
    set_timing_defaults(given)
    assert (given.block, given.warmup_s, given.settle_ms, given.rewarm_ms) == (1, 0.5, 7.0, 0.0)


def test_warm_up_runs_the_rounds_then_until_the_time_is_up():
    log: list = []
    runners = [FakeRunner("a", log), FakeRunner("b", log)]
    assert warm_up(runners, np.zeros(1), loops=2, seconds=0.0) == 2
    assert log == list("abab")
    log.clear()
    start = time.perf_counter()
    rounds = warm_up(runners, np.zeros(1), loops=1, seconds=0.05)
    assert time.perf_counter() - start >= 0.05 and rounds > 1 and log == list("ab") * rounds


def test_cpu_run_against_ncnn_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench.main(["--cpu", "--threads", "1", "--loops", "2", "--warmup", "1", "--settle-ms", "1",
                       "--models", "squeezenet", "--compare-ncnn", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "squeezenet" in printed and "ratio" in printed
    result = json.loads(out.read_text())[0]
    for key in ("vkncnn_median_ms", "ncnn_median_ms", "vkncnn_load_ms", "vkncnn_first_ms", "rss_peak_mb"):
        assert result[key] > 0
    # the CPU's interleaving defaults, except the settle time given
    assert (result["block"], result["warmup_s"], result["settle_ms"], result["rewarm_ms"]) == (5, 0.0, 1.0, 0.0)
    assert abs(result["ratio"] - result["vkncnn_median_ms"] / result["ncnn_median_ms"]) < 1e-9


def _gpu_profile(tmp_path, by: str) -> dict:
    from vkncnn.gpu.vulkan import instance
    if instance.get_gpu_count() == 0:
        import pytest
        pytest.skip("no Vulkan device")
    out = tmp_path / "bench.json"
    assert bench.main(["--gpu", "--loops", "1", "--warmup", "0", "--warmup-s", "0", "--rewarm-ms", "0",
                       "--models", "squeezenet", "--profile", by, "--json", str(out)]) == 0
    return json.loads(out.read_text())[0]["profile"]


def test_batches_feed_both_runtimes_batched_mats(tmp_path, capsys, monkeypatch):
    seen = []
    real_mat = bench._mat
    monkeypatch.setattr(bench, "_mat", lambda cls, x, batch: seen.append((cls.__module__, x.shape, batch))
                        or real_mat(cls, x, batch))
    out = tmp_path / "bench.json"
    assert bench.main(["--cpu", "--threads", "1", "--loops", "1", "--warmup", "0", "--settle-ms", "0",
                       "--models", "squeezenet", "--compare-ncnn", "--batch", "1,3", "--json", str(out)]) == 0
    assert "img/s" in capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert [r["batch"] for r in rows] == [1, 3]
    for r in rows:
        for who in ("vkncnn", "ncnn"):
            assert abs(r[f"{who}_images_per_s"] - r["batch"] * 1e3 / r[f"{who}_median_ms"]) < 1e-6
    assert {(m.split(".")[0], shape, b) for m, shape, b in seen} >= {
        ("vkncnn", (3, 227, 227), 1), ("ncnn", (3, 227, 227), 1),
        ("vkncnn", (3, 3, 227, 227), 3), ("ncnn", (3, 3, 227, 227), 3)}


def test_bad_batch_sizes_are_usage_errors():
    for bad in ("0", "a", ","):
        with pytest.raises(SystemExit) as e:
            bench.main(["--batch", bad])
        assert e.value.code == 2


def test_gpu_profile_by_layer(tmp_path):
    profile = _gpu_profile(tmp_path, "layers")
    assert "Convolution conv10" in profile and "Concat fire2/concat" in profile
    assert all(us > 0 for us in profile.values())


def test_gpu_profile_by_dispatch_names_each_shader(tmp_path):
    profile = _gpu_profile(tmp_path, "dispatches")
    # every label is "Type layer shader"; the concat's gathers and the input's cast show
    assert "Concat fire2/concat gather" in profile
    assert any(k.startswith("Convolution conv10 convolution") for k in profile)
    assert any(k.endswith("upload_cast") for k in profile)
    assert all(len(k.split()) == 3 and us > 0 for k, us in profile.items())


def test_switches_reach_both_runtimes_options():
    from types import SimpleNamespace

    from vkncnn.option import Option
    from vkncnn.tools.cmd_common import CommandError

    ours = Option()
    bench.set_precision(ours, fp16=True, fp16_arithmetic=False, coopmat=False)
    assert ours.use_fp16_storage and not ours.use_fp16_arithmetic and not ours.use_cooperative_matrix
    without_switch = SimpleNamespace()  # an ncnn binding whose Option lacks use_cooperative_matrix
    with pytest.raises(CommandError, match="--fp32"):
        bench.set_precision(without_switch, fp16=True, coopmat=False)
    bench.set_precision(without_switch, fp16=False, coopmat=False)  # fp32: no tensor cores either way
    assert not without_switch.use_fp16_storage and not without_switch.use_fp16_arithmetic
