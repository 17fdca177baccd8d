"""vkncnn layerbench: the one-layer models it builds, and a run against ncnn (no timing asserted)."""

from __future__ import annotations

import json

import numpy as np

import vkncnn
from vkncnn.tools.benchmark_models import param_path
from vkncnn.tools.dev import layer_bench


def test_input_params_name_every_axis():
    assert layer_bench._input_params((7,)) == "0=7"
    assert layer_bench._input_params((3, 7)) == "1=3 0=7"
    assert layer_bench._input_params((2, 3, 7)) == "2=2 1=3 0=7"
    assert layer_bench._input_params((2, 5, 3, 7)) == "2=2 11=5 1=3 0=7"


def test_one_layer_model_runs_with_its_input_shapes():
    config = layer_bench.LayerConfig("Eltwise", "0=1", ((4, 5, 6), (4, 5, 6)), tops=1)
    path_text = config.param_text()
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(path_text)
    net.load_model(b"")
    a = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    b = np.full((4, 5, 6), 0.5, np.float32)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(a))
        ex.input("in1", vkncnn.Mat(b))
        _, out = ex.extract("out0")
    np.testing.assert_array_equal(np.array(out), a + b)


def test_configs_count_every_use():
    configs = layer_bench.collect_configs(["squeezenet"], {"Pooling"})
    with open(param_path("squeezenet")) as f:
        poolings = sum(line.split()[0] == "Pooling" for line in f.read().splitlines()[2:] if line.split())
    assert sum(c.count for c in configs) == poolings
    assert len({(c.params, c.shapes) for c in configs}) == len(configs)
    assert all(c.models == {"squeezenet"} and len(c.shapes) == 1 for c in configs)


def test_cpu_run_against_ncnn_writes_json(tmp_path, capsys):
    out = tmp_path / "layers.json"
    assert layer_bench.main(["--cpu", "--threads", "1", "--models", "squeezenet", "--types", "Pooling,Concat",
                             "--loops", "2", "--warmup", "1", "--settle-ms", "0", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ratio" in printed and "all layers, each run alone" in printed
    rows = json.loads(out.read_text())
    assert {r["type"] for r in rows} == {"Pooling", "Concat"}
    assert any(len(r["shapes"]) >= 2 for r in rows if r["type"] == "Concat")
    for r in rows:
        assert r["vkncnn_ms"] > 0 and r["ncnn_ms"] > 0 and r["count"] >= 1
        assert abs(r["ratio"] - r["vkncnn_ms"] / r["ncnn_ms"]) < 1e-9
