"""`vkncnn profile`: exit codes, the table, the HTML report, the Chrome trace and the JSON,
on the numpy path and, where a Vulkan device exists, the GPU path."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn.tools import cli
from vkncnn.tools.benchmark_models import BENCHMARK_DIR

SQUEEZENET = str(BENCHMARK_DIR / "squeezenet.param")
SHAPE = ["--shape", "data=3,67,67"]  # small: the layer structure is what is tested
SVG = "{http://www.w3.org/2000/svg}"


def squeezenet_layers() -> list[tuple[str, str]]:
    """(type, name) of every layer an inference runs: all but the Input."""
    net = vkncnn.Net()
    net.load_param(SQUEEZENET)
    return [(layer.type, layer.name) for layer in net.layers() if layer.type != "Input"]


def profile(tmp_path, capsys, *flags: str) -> tuple[dict, ET.Element, dict]:
    html, trace = tmp_path / "report.html", tmp_path / "trace.json"
    assert cli.main(["profile", SQUEEZENET, *SHAPE, "--loops", "2", "--warmup-s", "0", "-o", str(html),
                     "--trace", str(trace), "--json", *flags]) == 0
    report = json.loads(capsys.readouterr().out)
    return report, ET.parse(html).getroot(), json.loads(trace.read_text())


def check_outputs(report: dict, page: ET.Element, trace: dict, path: str) -> None:
    expected = squeezenet_layers()
    # JSON: every layer once, in execution order (squeezenet's file order), times that add up
    assert [(r["type"], r["name"]) for r in report["layers"]] == expected
    assert report["path"] == path and report["loops"] == 2
    assert report["layers_total_us"] == pytest.approx(sum(r["median_us"] for r in report["layers"]))
    assert sum(r["share"] for r in report["layers"]) == pytest.approx(1.0)
    conv10 = next(r for r in report["layers"] if r["name"] == "conv10")
    assert conv10["shapes"] == [[1000, 6, 6]]  # as real ncnn gives for a 67x67 input and conv10["median_us"] > 0
    # HTML: one bar per layer, with its name, in order; one bar per type
    bars = [e for e in page.iter(f"{SVG}rect") if e.get("class") == "bar"]
    assert [(b.get("data-type"), b.get("data-name")) for b in bars] == expected
    # bar lengths in proportion to the layers' times
    longest = max(report["layers"], key=lambda r: r["median_us"])
    scale = float(bars[report["layers"].index(longest)].get("width")) / longest["median_us"]
    for bar, row in zip(bars, report["layers"]):
        assert float(bar.get("width")) == pytest.approx(row["median_us"] * scale, abs=0.01)
    types = [e.get("data-type") for e in page.iter(f"{SVG}rect") if e.get("class") == "type-bar"]
    assert sorted(types) == sorted({t for t, _ in expected})
    text = ET.tostring(page, encoding="unicode", method="text")
    assert "squeezenet.param" in text and report["device"] in text and "ms" in text
    assert not any(e.tag.endswith("script") for e in page.iter())
    # trace: complete events with the fields Chrome wants; the layers of an inference fit in it
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for e in complete:
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys()
        assert e["dur"] >= 0 and e["ts"] >= 0
    runs = [e for e in complete if e["cat"] == "inference"]
    assert len(runs) == 2
    layer_events = [e for e in complete if e["cat"] in ("cpu", "gpu", "host")]
    assert len(layer_events) == 2 * len(expected)
    for run in runs:
        inside = [e for e in layer_events if run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1]
        assert len(inside) == len(expected)
        assert 0 < sum(e["dur"] for e in inside) <= run["dur"]


def test_profile_cpu_outputs(tmp_path, capsys):
    report, page, trace = profile(tmp_path, capsys, "--cpu")
    check_outputs(report, page, trace, "cpu")
    assert all(r["runs_on"] == "cpu" and r["median_us"] > 0 for r in report["layers"])


@pytest.mark.gpu
def test_profile_gpu_outputs(tmp_path, capsys):
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    report, page, trace = profile(tmp_path, capsys, "--gpu", "--fp32")
    check_outputs(report, page, trace, "gpu")
    assert report["precision"] == "fp32" and "timestamps" in report["clock"]
    conv1 = next(r for r in report["layers"] if r["name"] == "conv1")
    assert conv1["runs_on"] == "gpu" and any(k.startswith("convolution") for k in conv1["dispatches"])
    # a dispatch event per shader, inside its layer's event
    assert any(e.get("cat") == "dispatch" for e in trace["traceEvents"])


def test_profile_table_and_own_weights(tmp_path, capsys):
    data = Path(cli.__file__).resolve().parent / "data"  # the shipped digits model and its weights
    assert cli.main(["profile", str(data / "digits.param"), str(data / "digits.bin"), "--loops", "3",
                     "--top", "2", "--shape", "1,8,8"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["ms", "share"])
    rows = [line.split() for line in lines[header + 1:header + 3]]
    assert float(rows[0][0]) >= float(rows[1][0])  # heaviest first
    assert all(re.fullmatch(r"\d+\.\d{3}", row[0]) and row[1].endswith("%") for row in rows)
    assert lines[header + 3].startswith("... 4 more layers")
    assert "more layers" in out and "by type:" in out and "median of 3 inferences" in out


def test_layer_observer_sees_every_layer_once():
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False  # the observer is the numpy path's
    net.load_param(SQUEEZENET)
    net.load_model(b"\0" * 5_000_000)
    seen = []
    with net.create_extractor() as ex:
        ex.set_layer_observer(lambda layer, start, end: seen.append((layer.name, end - start)))
        ex.input("data", vkncnn.Mat(np.zeros((3, 67, 67), np.float32)))
        ex.extract("output")
    assert [name for name, _ in seen] == [n for _, n in squeezenet_layers()]
    assert all(seconds >= 0 for _, seconds in seen)
    with pytest.raises(vkncnn.Error, match="callable"):
        net.create_extractor().set_layer_observer(3)


@pytest.mark.parametrize("argv, status, message", [
    (["profile", "/no/such.param"], 1, "no such file"),
    (["profile", SQUEEZENET, "--loops", "0"], 1, "--loops must be at least 1"),
    (["profile", SQUEEZENET, "--shape", "nope=3,8,8"], 1, "not an input"),
    (["profile", SQUEEZENET, "--shape", "data=3;8"], 2, "is not a shape"),
    (["profile", SQUEEZENET, "--cpu", "--gpu"], 2, "not allowed with"),
])
def test_profile_errors(argv, status, message, capsys):
    if status == 2:
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        assert stop.value.code == 2
    else:
        assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_profile_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["profile", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--shape", "--cpu", "--gpu", "--fp32", "--loops", "--warmup-s", "--output", "--trace", "--json"):
        assert flag in out
