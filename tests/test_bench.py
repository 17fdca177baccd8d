"""vkncnn bench: the interleaving and the figures it reports (no timing is asserted)."""

from __future__ import annotations

import json

import numpy as np

from vkncnn.tools import bench


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


def test_cpu_run_against_ncnn_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench.main(["--cpu", "--threads", "1", "--loops", "2", "--warmup", "1", "--settle-ms", "1",
                       "--models", "squeezenet", "--compare-ncnn", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "squeezenet" in printed and "ratio" in printed
    result = json.loads(out.read_text())[0]
    for key in ("vkncnn_median_ms", "ncnn_median_ms", "vkncnn_load_ms", "vkncnn_first_ms", "rss_peak_mb"):
        assert result[key] > 0
    assert abs(result["ratio"] - result["vkncnn_median_ms"] / result["ncnn_median_ms"]) < 1e-9
