"""The `vkncnn` command line: exit codes, one-line errors, and each command against real ncnn.

Commands run in-process through cli.main(argv); a few run as `python -m vkncnn` to check
what only a real process shows (exit status, the entry point).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn.tools import cli, cmd_devices, model_summary
from vkncnn.tools.benchmark_models import BENCHMARK_DIR
from vkncnn.tools.cmd_common import CommandError
from vkncnn.tools.ncnn_oracle import run_ncnn

DATA = Path(cli.__file__).resolve().parent / "data"
DIGITS_PARAM, DIGITS_BIN = str(DATA / "digits.param"), str(DATA / "digits.bin")
SQUEEZENET = str(BENCHMARK_DIR / "squeezenet.param")
README = Path(__file__).resolve().parents[1] / "README.md"


def gpu_count() -> int:
    return vkncnn.get_gpu_count()


def one_error_line(err: str) -> str:
    """The single `vkncnn: error:` line a failed command prints, and nothing else."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("vkncnn: error: ") and "Traceback" not in err, err
    return lines[0]


def digits_image(i: int = 0) -> np.ndarray:
    with np.load(DATA / "digits_test.npz") as z:
        return z["images"][i][None].astype(np.float32)  # (1, 8, 8), as the net takes it


# -- the process: entry point, exit statuses ------------------------------------------------------
def _vkncnn(*args: str) -> subprocess.CompletedProcess:
    package_root = str(Path(vkncnn.__file__).resolve().parents[1])  # the vkncnn under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    env.pop("VKNCNN_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "vkncnn", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_python_m_vkncnn_help_and_version():
    shown = _vkncnn("--help")
    assert shown.returncode == 0
    for name in list(cli.COMMANDS) + list(cli.PASS_THROUGH):
        assert re.search(rf"^  {re.escape(name)}\s+\S", shown.stdout, re.M), name
    version = _vkncnn("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"vkncnn {cli.version()}"


def test_python_m_vkncnn_failure_is_one_line_and_exit_1(tmp_path):
    done = _vkncnn("info", str(tmp_path / "missing.param"))
    assert done.returncode == 1
    assert "missing.param" in one_error_line(done.stderr)


# -- in-process: help, usage errors, failures ----------------------------------------------------
def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["-h"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: vkncnn ")
    for name, (_, doc) in {**cli.COMMANDS, **cli.PASS_THROUGH}.items():
        assert f"{name}  " in out and doc in out


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_command_help_and_every_option_explained(command, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: vkncnn {command} ")
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    sub.load()
    unexplained = [a.dest for a in sub._actions if not a.help]
    assert not unexplained


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"vkncnn {cli.version()}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", cli.version())


def test_no_command_prints_usage_and_exits_2(capsys):
    assert cli.main([]) == 2
    assert "usage: vkncnn" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    for argv in (["info"], ["no-such-command"], ["info", DIGITS_PARAM, "--shape", "in0=1,eight,8"],
                 ["run", DIGITS_PARAM, DIGITS_BIN]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2, argv
    assert "usage: vkncnn run" in capsys.readouterr().err


def test_bad_shape_is_a_usage_error_naming_the_option(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["info", DIGITS_PARAM, "--shape", "3;32;32"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage: vkncnn info" in err and "argument --shape: '3;32;32' is not a shape" in err


@pytest.mark.parametrize("option", ["--warmup-s", "--settle-ms", "--rewarm-ms"])
@pytest.mark.parametrize("value", ["-5", "nan", "inf", "abc"])
def test_bench_times_are_numbers_at_least_0(capsys, option, value):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--models", "squeezenet", option, value])
    assert e.value.code == 2
    assert f"argument {option}: expected a number >= 0, got '{value}'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["info", "missing.param"], "missing.param: no such file"),
    (["info", DIGITS_PARAM], "--shape in0=C,H,W"),                       # no shape anywhere for in0
    (["info", DIGITS_PARAM, "--shape", "data=1,8,8"], "not an input of the model (inputs: in0)"),
    (["info", DIGITS_PARAM, "--shape", "3,8,8"], "convrelu_0"),          # the layer that refuses it
    (["run", DIGITS_PARAM, "missing.bin", "--input", "x.npy"], "missing.bin: no such file"),
    (["run", DIGITS_PARAM, DIGITS_BIN, "--input", "nope=x.npy"], "no blob 'nope'"),
    (["bench", "--models", "my.param"], "my.param: no such file"),
    (["bench", "--models", "no_such_model"], "unknown model 'no_such_model'"),
    (["compare", "--models", "my.param"], "my.param: no such file"),
    (["randweights", "missing.param", "out.bin"], "missing.param"),       # a pass-through tool's failure
])
def test_failures_are_one_line_exit_1(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VKNCNN_DEBUG", raising=False)
    assert cli.main(argv) == 1
    assert words in one_error_line(capsys.readouterr().err)


def test_debug_lets_the_exception_through(monkeypatch):
    monkeypatch.delenv("VKNCNN_DEBUG", raising=False)
    with pytest.raises(CommandError, match="no such file"):
        cli.main(["--debug", "info", "missing.param"])
    with pytest.raises(CommandError):
        cli.main(["info", "missing.param", "--debug"])
    monkeypatch.setenv("VKNCNN_DEBUG", "1")
    with pytest.raises(vkncnn.Error):
        cli.main(["randweights", "missing.param", "out.bin"])


# -- info -----------------------------------------------------------------------------------------
def _ncnn_blob_shapes(param: str, weights: bytes, inputs: dict, names: list[str]) -> dict:
    got = run_ncnn(Path(param).read_text(), weights, inputs, names)
    return {name: list(a.shape) for name, a in got.items()}


def _info_json(argv: list[str], capsys) -> dict:
    assert cli.main(["info", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_info_json_on_digits_matches_ncnn(capsys):
    info = _info_json([DIGITS_PARAM, DIGITS_BIN, "--shape", "in0=1x8x8"], capsys)
    assert set(info) == {"inputs", "outputs", "layers", "flops", "params"}
    assert info["inputs"] == [{"name": "in0", "shape": [1, 8, 8]}]
    assert info["outputs"] == [{"name": "out0", "shape": [10]}]
    layers = {row["name"]: row for row in info["layers"]}
    assert [r["type"] for r in info["layers"]] == ["Input", "Convolution", "Convolution", "Pooling", "Flatten",
                                                   "InnerProduct", "InnerProduct"]
    for row in info["layers"]:
        assert set(row) == {"name", "type", "bottoms", "tops", "shapes", "flops", "params", "runs_on"}
        assert row["runs_on"] in ("gpu", "host")
    # every blob's shape as real ncnn sees it
    blobs = [t for row in info["layers"] for t in row["tops"]]
    ncnn_shapes = _ncnn_blob_shapes(DIGITS_PARAM, Path(DIGITS_BIN).read_bytes(), {"in0": digits_image()}, blobs)
    for row in info["layers"]:
        assert row["shapes"] == [ncnn_shapes[t] for t in row["tops"]], row["name"]
    # weights: conv 1->16 3x3 + bias, conv 16->32 3x3 + bias, fc 512->64 + bias, fc 64->10 + bias
    assert [layers[n]["params"] for n in ("convrelu_0", "convrelu_1", "fcrelu_0", "linear_3")] == \
        [16 * 9 + 16, 32 * 16 * 9 + 32, 64 * 512 + 64, 10 * 64 + 10]
    assert info["params"] == sum(r["params"] for r in info["layers"]) == 38282
    # multiply-adds x 2: output positions x weights per output channel; pooling: taps x outputs
    assert layers["convrelu_0"]["flops"] == 2 * 8 * 8 * 16 * 9
    assert layers["convrelu_1"]["flops"] == 2 * 8 * 8 * 32 * 16 * 9
    assert layers["fcrelu_0"]["flops"] == 2 * 64 * 512 and layers["linear_3"]["flops"] == 2 * 10 * 64
    assert layers["maxpool2d_4"]["flops"] == 32 * 4 * 4 * 4 and layers["flatten_8"]["flops"] == 0
    assert info["flops"] == sum(r["flops"] for r in info["layers"])


def test_info_json_on_squeezenet_matches_ncnn(capsys):
    info = _info_json([SQUEEZENET, "--shape", "data=3,227,227"], capsys)
    assert info["inputs"] == [{"name": "data", "shape": [3, 227, 227]}]
    assert [o["name"] for o in info["outputs"]] == ["output"]
    _, weights = model_summary.count_params(SQUEEZENET, None, seed=0)  # the random weights info used
    blobs = [t for row in info["layers"] for t in row["tops"]]
    ncnn_shapes = _ncnn_blob_shapes(SQUEEZENET, weights, {"data": np.zeros((3, 227, 227), np.float32)}, blobs)
    for row in info["layers"]:
        assert row["shapes"] == [ncnn_shapes[t] for t in row["tops"]], row["name"]
    assert info["outputs"][0]["shape"] == ncnn_shapes["output"]
    assert info["params"] == 1235496  # SqueezeNet 1.1
    assert all(r["runs_on"] == "gpu" for r in info["layers"])


def test_info_takes_shapes_from_the_param_hints(capsys):
    info = _info_json([SQUEEZENET], capsys)  # Input 0=227 1=227 2=3
    assert info["inputs"] == [{"name": "data", "shape": [3, 227, 227]}]


def test_info_text_table(capsys):
    assert cli.main(["info", DIGITS_PARAM, DIGITS_BIN, "--shape", "1,8,8"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^convrelu_1\s+Convolution\s+32x8x8\s+590k\s+4.64k\s+gpu\s+1 -> 2$", out, re.M), out
    assert "38.3k params (38282)" in out


def test_info_flops_convention(tmp_path, capsys):
    """Depthwise and transposed convolutions, MatMul, data movement and elementwise layers."""
    param = tmp_path / "m.param"
    param.write_text("7767517\n6 7\n"
                     "Input in 0 1 x 0=8 1=8 2=4\n"
                     "ConvolutionDepthWise dw 1 1 x a 0=4 1=3 4=1 5=1 6=36 7=4\n"
                     "Deconvolution up 1 1 a b 0=2 1=2 3=2 5=0 6=32\n"
                     "Split sp 1 2 b b1 b2\n"
                     "MatMul mm 2 1 b1 b2 c\n"
                     "Sigmoid sig 1 1 c d\n")
    info = _info_json([str(param)], capsys)
    rows = {r["name"]: r for r in info["layers"]}
    assert rows["dw"]["shapes"] == [[4, 8, 8]] and rows["dw"]["flops"] == 2 * 64 * 36
    assert rows["dw"]["params"] == 36 + 4
    assert rows["up"]["shapes"] == [[2, 16, 16]] and rows["up"]["flops"] == 2 * 64 * 32  # input positions x weights
    assert rows["sp"]["flops"] == 0
    assert rows["mm"]["shapes"] == [[2, 16, 16]] and rows["mm"]["flops"] == 2 * (2 * 16 * 16) * 16
    assert rows["sig"]["flops"] == 2 * 16 * 16


# -- run ------------------------------------------------------------------------------------------
def _ncnn_digits(x: np.ndarray) -> np.ndarray:
    return run_ncnn(Path(DIGITS_PARAM).read_text(), Path(DIGITS_BIN).read_bytes(), {"in0": x}, ["out0"])["out0"]


def test_run_output_matches_ncnn(tmp_path, capsys):
    x = digits_image(3)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", f"in0={tmp_path / 'x.npy'}",
                     "--output", f"out0={out}"]) == 0
    assert "out0: shape 10 written to" in capsys.readouterr().out
    np.testing.assert_allclose(np.load(out), _ncnn_digits(x), rtol=1e-4, atol=1e-4)


def test_run_prints_a_summary_and_topk(tmp_path, capsys):
    x = digits_image(0)
    np.save(tmp_path / "x.npy", x)
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", str(tmp_path / "x.npy"), "--topk", "3"]) == 0
    out = capsys.readouterr().out
    want = _ncnn_digits(x)
    assert out.startswith("out0: shape 10  min ")
    top = re.search(r"top-3: (\d+): ", out)
    assert top and int(top.group(1)) == int(np.argmax(want))


def _pgm(path: Path, pixels: np.ndarray) -> None:
    h, w = pixels.shape
    path.write_bytes(b"P5\n# a comment\n%d %d\n255\n" % (w, h) + pixels.astype(np.uint8).tobytes())


def test_run_image_preprocessing_matches_ncnn(tmp_path):
    """A 12x10 gray image resized to 8x8 and scaled as ncnn's own pixel helpers do."""
    import ncnn

    pixels = np.random.default_rng(0).integers(0, 256, (10, 12)).astype(np.uint8)
    _pgm(tmp_path / "digit.pgm", pixels)
    out = tmp_path / "y.npy"
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", str(tmp_path / "digit.pgm"), "--size", "8,8",
                     "--gray", "--mean", "10", "--norm", "0.0039215", "--output", str(out)]) == 0
    mat = ncnn.Mat.from_pixels_resize(pixels, ncnn.Mat.PixelType.PIXEL_GRAY, 12, 10, 8, 8)
    mat.substract_mean_normalize([10.0], [0.0039215])
    np.testing.assert_allclose(np.load(out), _ncnn_digits(np.array(mat)), rtol=1e-4, atol=1e-4)


def test_run_a_folder_of_inputs(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(2):
        np.save(folder / f"d{i}.npy", digits_image(i))
    (folder / "notes.txt").write_text("not an input")
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", f"in0={folder}",
                     "--output", f"out0={tmp_path / 'out'}/"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["d0.npy", "d1.npy"]
    for i in range(2):
        np.testing.assert_allclose(np.load(tmp_path / "out" / f"d{i}.npy"), _ncnn_digits(digits_image(i)),
                                   rtol=1e-4, atol=1e-4)
    assert capsys.readouterr().err == ""  # stderr is no terminal here: no progress line
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", str(folder), "--output", "out0=x.npy"]) == 1
    assert "give a folder" in one_error_line(capsys.readouterr().err)


def test_run_compressed_image_without_pillow_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` now fails
    (tmp_path / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", str(tmp_path / "cat.png")]) == 1
    assert "needs Pillow (pip install pillow)" in one_error_line(capsys.readouterr().err)


# -- devices --------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_devices_json(capsys):
    if gpu_count() == 0:
        pytest.skip("no Vulkan device")
    assert cli.main(["devices", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["devices"]) == gpu_count() >= 1
    default = report["devices"][report["default"]]
    assert default["default"] and report["default_reason"]
    for d in report["devices"]:
        assert d["name"] and d["type"] in ("discrete", "integrated", "virtual", "cpu")
        assert re.fullmatch(r"\d+\.\d+\.\d+", d["api_version"]) and d["subgroup_size"] >= 1
        assert len(d["max_workgroup_size"]) == 3 and d["memory_heaps"]
    assert cli.main(["devices"]) == 0
    assert f"default: device {report['default']}" in capsys.readouterr().out


def test_devices_without_the_vulkan_package(capsys, monkeypatch):
    monkeypatch.setattr(cmd_devices, "vulkan_installed", lambda: False)
    assert cli.main(["devices"]) == 1
    assert "pip install 'vkncnn[gpu]'" in one_error_line(capsys.readouterr().err)


# -- bench, compare -------------------------------------------------------------------------------
def test_bench_a_param_path(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", DIGITS_PARAM, DIGITS_BIN, "--shape", "in0=1,8,8", "--cpu", "--threads", "1",
                     "--loops", "1", "--warmup", "0", "--settle-ms", "0", "--json", str(out)]) == 0
    (result,) = json.loads(out.read_text())
    assert result["model"] == DIGITS_PARAM and result["vkncnn_median_ms"] > 0
    assert DIGITS_PARAM in capsys.readouterr().out


def test_bench_a_failing_model_exits_1_with_its_reason(tmp_path, capsys):
    assert cli.main(["bench", "--models", DIGITS_PARAM, "--shape", "in0=3,8,8", "--loops", "1", "--warmup", "0",
                     "--settle-ms", "0"]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if "failed:" in line]
    assert len(failed) == 1 and "ShapeError" in failed[0] and "convrelu_0" in failed[0]


def test_compare_a_param_path(capsys):
    assert cli.main(["compare", "--models", DIGITS_PARAM, "--shape", "in0=1,8,8"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith(DIGITS_PARAM) and float(row.split()[-1]) < 1e-4


# -- shadertest -----------------------------------------------------------------------------------
def test_shadertest_fails_when_the_case_cannot_run(capsys):
    # 6=100 is no multiple of 16 outputs x 3x3: the layer refuses its params, so nothing is compared
    assert cli.main(["shadertest", "Convolution", "0=16", "1=3", "5=1", "6=100", "--shape", "3,32,32"]) == 1
    out = capsys.readouterr().out
    assert "n/a (ParamError" in out and "1 failed" in out
    assert cli.main(["shadertest", "Convolution", "0=16", "1=3", "5=1", "6=100", "--grid"]) == 1  # all n/a
    # no kernel size: the weight size cannot be told from the shape, and the layer says why
    assert cli.main(["shadertest", "Convolution", "0=16", "--shape", "3x8x8"]) == 1
    assert "n/a (ParamError" in capsys.readouterr().out


def test_shadertest_shapes_and_filled_in_weight_sizes():
    from vkncnn.tools.shader_test import parse_shape
    from vkncnn.tools.shader_test_params import fill_weight_sizes

    assert parse_shape("3,32,32") == parse_shape("3x32x32") == parse_shape(" 3 X 32 x 32 ") == (3, 32, 32)
    assert parse_shape("7") == (7,)
    for bad in ("3,a", "3x", "", "1,2,3,4,5", "-3,4"):
        with pytest.raises(Exception, match="expected 1 to 4 sizes"):
            parse_shape(bad)
    conv = {0: 16, 1: 3, 5: 1}
    assert fill_weight_sizes("Convolution", conv, [(3, 32, 32)]) == ({**conv, 6: 432}, {6: 432})
    assert fill_weight_sizes("Convolution", {**conv, 11: 5}, [(3, 8, 8)])[1] == {6: 16 * 3 * 3 * 5}
    assert fill_weight_sizes("ConvolutionDepthWise", {0: 8, 1: 3, 7: 4}, [(8, 9, 9)])[1] == {6: 8 * 2 * 9}
    assert fill_weight_sizes("Convolution3D", {0: 2, 1: 3}, [(4, 5, 6, 7)])[1] == {6: 2 * 4 * 27}
    assert fill_weight_sizes("InnerProduct", {0: 10}, [(3, 4, 4)])[1] == {2: 480}
    assert fill_weight_sizes("InnerProduct", {0: 10}, [(5, 6)])[1] == {2: 60}  # rows of 6
    assert fill_weight_sizes("LSTM", {0: 8, 2: 2}, [(5, 6)])[1] == {1: 2 * 4 * 8 * 6}
    assert fill_weight_sizes("BatchNorm", {}, [(3, 4, 4)])[1] == {0: 3}
    # given sizes are kept; what cannot be told is left to the layer's own check
    assert fill_weight_sizes("Convolution", {**conv, 6: 100}, [(3, 8, 8)])[1] == {}
    assert fill_weight_sizes("Convolution", {0: 16}, [(3, 8, 8)])[1] == {}  # no kernel size
    assert fill_weight_sizes("ConvolutionDepthWise", {0: 8, 1: 3, 7: 3}, [(8, 9, 9)])[1] == {}  # 3 does not divide 8
    assert fill_weight_sizes("Convolution", conv, [(13,)])[1] == {}  # not a (c, h, w) input
    assert fill_weight_sizes("Sigmoid", {}, [(3, 4)])[1] == {}


@pytest.mark.gpu
def test_shadertest_fills_in_weights_and_times(capsys):
    if gpu_count() == 0:
        pytest.skip("no Vulkan device")
    assert cli.main(["shadertest", "Convolution", "0=8", "1=3", "5=1", "--shape", "3x10x10", "--time",
                     "--runs", "3", "--variants", "fp32-pack1,fp16-pack4"]) == 0
    out = capsys.readouterr().out
    assert "weight size 6=216 filled in from the input shape" in out
    assert re.search(r"^Convolution 0=8 1=3 5=1 6=216 \[\(3, 10, 10\)\]: .* PASS$", out, re.M)
    times = re.findall(r"^  (fp\d\d-pack\d): .*; layer ([\d.]+) us per run \(GPU, median of 3\)", out, re.M)
    assert [v for v, _ in times] == ["fp32-pack1", "fp16-pack4"] and all(float(us) > 0 for _, us in times)


@pytest.mark.gpu
def test_shadertest_readme_example_passes(capsys):
    if gpu_count() == 0:
        pytest.skip("no Vulkan device")
    found = re.search(r"`vkncnn shadertest (Convolution [^`]*)`", README.read_text())
    assert found, "README's command-line section shows a shadertest of a Convolution"
    args = found.group(1).split()
    assert cli.main(["shadertest", *args]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "6=432" in out  # the weight size filled in: 16 outputs x 3 inputs x 3x3
