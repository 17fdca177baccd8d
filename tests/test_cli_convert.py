"""`vkncnn convert`: pnnx run in a folder of its own, the check against the source framework,
and the command's errors.

The first tests need neither torch nor pnnx: a stand-in pnnx (a small script that writes
what pnnx writes, side files included) and a stand-in reference exercise everything around
the real converter. The last ones convert a traced PyTorch module with the real pnnx and
skip where torch or pnnx is not installed.
"""

from __future__ import annotations

import re
import stat
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn.tools import cli, cmd_convert

RELU_PARAM = "7767517\n2 2\nInput in0 0 1 in0\nReLU relu0 1 1 in0 out0\n"

# What pnnx does, as far as the command sees it: files named by key=value (relative to its
# folder), a side file beside its input, the input shape in the .pnnx.param, a crash on request.
FAKE_PNNX = f"""#!{sys.executable}
import os, re, signal, sys
from pathlib import Path
args = dict(a.split("=", 1) for a in sys.argv[2:])
model = Path(sys.argv[1])
print("############# pass_level0")
if os.environ.get("FAKE_PNNX_CRASH"):
    print("\\x1b[0;93mabout to fall over\\x1b[m", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
shape = re.findall(r"\\[([^\\]]*)\\]", args.get("inputshape", "[1,4]"))[0]
Path(args["pnnxparam"]).write_text(f"7767517\\n1 1\\npnnx.Input pnnx_input_0 0 1 0 #0=({{shape}})f32\\n")
Path(args["ncnnparam"]).write_text({RELU_PARAM!r})
Path(args["ncnnbin"]).write_bytes(b"")
(model.parent / (model.stem + ".pnnxsim.onnx")).write_bytes(b"side file")
Path("fp16.txt").write_text(args["fp16"])
"""


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("vkncnn: error: "), err
    return lines[0]


def fake_torchscript(path: Path) -> Path:
    """A zip laid out as torch.jit.save lays it out (enough for the file check, not for torch)."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{path.stem}/code/__torch__.py", "")
        z.writestr(f"{path.stem}/data.pkl", b"")
    return path


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def fake_pnnx(tmp_path_factory, monkeypatch) -> Path:
    exe = tmp_path_factory.mktemp("bin") / "pnnx"  # outside tmp_path, the user's folder in these tests
    exe.write_text(FAKE_PNNX)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(cmd_convert, "find_pnnx", lambda: exe)
    return exe


# -- arguments and files, without torch or pnnx ---------------------------------------------------
@pytest.mark.parametrize("text, shapes", [
    ("1,3,224,224", [(1, 3, 224, 224)]),
    ("[1,3,224,224]", [(1, 3, 224, 224)]),
    ("1x3x8x8", [(1, 3, 8, 8)]),
    ("[1,3,8,8],[1,10]", [(1, 3, 8, 8), (1, 10)]),
    ("1,3,8,8;1,10", [(1, 3, 8, 8), (1, 10)]),
    ("[1,3,8,8]; [1,10]", [(1, 3, 8, 8), (1, 10)]),
    ("16", [(16,)]),
])
def test_shape_forms(text, shapes):
    assert cmd_convert.parse_input_shapes(text) == shapes


@pytest.mark.parametrize("argv, words", [
    (["--shape", "1,three,8"], "is not a shape"),
    (["--shape", "2,3,8,8"], "the first dim is the batch"),
    (["--shape", "[1,3,8,8]f32"], "no type suffix"),
    (["--shape", "1,1,2,3,4,5"], "at most 4 dims after the batch"),
    (["--shape", "1,0,8"], "a dim is 0"),
    (["--tol", "0"], "expected a number > 0"),
    (["--fp16", "--fp32"], "not allowed with argument"),
    ([], None),  # no MODEL
])
def test_usage_errors_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["convert", *argv] if not argv else ["convert", "m.pt", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage: vkncnn convert" in err
    if words:
        assert words in err


def test_missing_and_unreadable_models_fail_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.pt").write_text("not a model")
    with zipfile.ZipFile(tmp_path / "weights.pt", "w") as z:  # torch.save's layout: data.pkl, no code/
        z.writestr("weights/data.pkl", b"")
    for argv, words in [(["missing.pt"], "missing.pt: no such file"),
                        (["notes.pt"], "notes.pt: not a TorchScript file"),
                        (["weights.pt"], "a torch.save checkpoint"),
                        (["weights.pt"], "torch.jit.trace(model, example_input).save(path)")]:
        assert cli.main(["convert", *argv]) == 1
        assert words in one_error_line(capsys.readouterr().err)


def test_missing_pnnx_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cmd_convert, "find_pnnx", lambda: None)
    model = fake_torchscript(tmp_path / "net.pt")
    assert cli.main(["convert", str(model), "--no-check"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "needs pnnx" in line and "pip install pnnx" in line and "vkncnn[convert]" in line
    assert listing(tmp_path) == {"net.pt": model.read_bytes()}


@pytest.mark.parametrize("name, package", [("net.pt", "torch"), ("net.onnx", "onnxruntime")])
def test_a_check_without_its_framework_fails_before_converting(name, package, tmp_path, capsys, monkeypatch,
                                                               fake_pnnx):
    monkeypatch.setattr(cmd_convert, "installed", lambda module: module != package)
    model = tmp_path / name
    fake_torchscript(model) if name.endswith(".pt") else model.write_bytes(b"onnx")
    before = listing(tmp_path)
    assert cli.main(["convert", str(model)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert f"needs {package}: pip install {package}" in line and "--no-check" in line
    assert listing(tmp_path) == before  # nothing converted, nothing written


def test_pnnx_runs_in_a_folder_of_its_own(tmp_path, capsys, fake_pnnx):
    model = fake_torchscript(tmp_path / "net.pt")
    assert cli.main(["convert", str(model), "--no-check"]) == 0
    out = capsys.readouterr().out
    # beside the model: the model, untouched, and the two ncnn files; none of pnnx's side files
    files = listing(tmp_path)
    assert sorted(files) == ["net.ncnn.bin", "net.ncnn.param", "net.pt"]
    assert files["net.ncnn.param"].decode() == RELU_PARAM
    assert f"wrote {tmp_path / 'net.ncnn.param'} and {tmp_path / 'net.ncnn.bin'}" in out
    assert "fp16 weights" in out


def test_output_dir_and_fp32(tmp_path, capsys, fake_pnnx, monkeypatch):
    model = fake_torchscript(tmp_path / "net.pt")
    seen = {}
    real_run = cmd_convert.subprocess.run

    def spy(argv, **kw):
        seen["argv"] = argv
        return real_run(argv, **kw)

    monkeypatch.setattr(cmd_convert.subprocess, "run", spy)
    out_dir = tmp_path / "out" / "ncnn"
    assert cli.main(["convert", str(model), "-o", str(out_dir), "--fp32", "--no-check",
                     "--shape", "[1,3,8,8];[1,10]"]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["net.ncnn.bin", "net.ncnn.param"]
    assert "fp16=0" in seen["argv"] and "inputshape=[1,3,8,8],[1,10]" in seen["argv"]
    assert "fp32 weights" in capsys.readouterr().out


def test_a_pnnx_crash_is_one_line_with_its_last_words(tmp_path, capsys, fake_pnnx, monkeypatch):
    monkeypatch.setenv("FAKE_PNNX_CRASH", "1")
    model = fake_torchscript(tmp_path / "net.pt")
    assert cli.main(["convert", str(model), "--no-check"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "pnnx crashed (SIGSEGV)" in line and "about to fall over" in line and "\x1b" not in line
    assert "pass_level0" not in line  # progress lines are not the reason
    assert listing(tmp_path).keys() == {"net.pt"}


@pytest.mark.parametrize("scale, code", [(1.0, 0), (1.5, 1)])
def test_the_check_compares_both_paths_with_the_reference(scale, code, tmp_path, capsys, fake_pnnx, monkeypatch):
    """The stand-in model is a ReLU; the stand-in framework computes ReLU (the check passes) or
    1.5 x ReLU (relative error 1/3 on every path: it fails, and says where)."""
    monkeypatch.setattr(cmd_convert, "installed", lambda module: True)
    fed = []

    def reference(source, inputs):
        fed.append(inputs)
        return "relu 1.0", [np.maximum(a, 0) * scale for a in inputs]

    monkeypatch.setattr(cmd_convert, "reference_torchscript", reference)
    model = fake_torchscript(tmp_path / "net.pt")
    assert cli.main(["convert", str(model), "--shape", "1,2,5", "--seed", "3"]) == code
    captured = capsys.readouterr()
    (inputs,) = fed
    assert [a.shape for a in inputs] == [(1, 2, 5)] and inputs[0].min() < 0 < inputs[0].max()
    np.testing.assert_array_equal(inputs[0], np.random.default_rng(3).uniform(-1, 1, (1, 2, 5)).astype(np.float32))
    paths = ["numpy", "gpu"] if vkncnn.get_gpu_count() > 0 else ["numpy"]
    rows = re.findall(r"^out0\s+2x5\s+(\w+)\s+(\S+)\s+(\S+)\s+(\w+)$", captured.out, re.M)
    assert [r[0] for r in rows] == paths
    for path, err, rel, verdict in rows:
        if code == 0:  # exact on the numpy path; fp16 storage rounds on the GPU
            assert float(err) <= (0 if path == "numpy" else 1e-3) and verdict == "ok"
        else:
            assert float(rel) == pytest.approx(1 / 3, rel=1e-2) and verdict == "FAIL"
    if code == 0:
        assert "ok: 1 output(s) within --tol 0.01 of relu 1.0" in captured.out
    else:
        line = one_error_line(captured.err)
        assert "out0 on the numpy path: relative error 0.333 > --tol 0.01" in line
        assert "files kept" in line


def test_a_reference_or_a_path_that_fails_is_one_line(tmp_path, capsys, fake_pnnx, monkeypatch):
    monkeypatch.setattr(cmd_convert, "installed", lambda module: True)
    model = fake_torchscript(tmp_path / "net.pt")

    def broken(source, inputs):
        raise RuntimeError("forward() expected 2 arguments\n  (at line 3)")

    monkeypatch.setattr(cmd_convert, "reference_torchscript", broken)
    assert cli.main(["convert", str(model), "--shape", "1,4"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "on its own framework failed (RuntimeError: forward() expected 2 arguments (at line 3))" in line
    assert "--no-check" in line

    def no_gpu_for_you(conv, feed, gpu, fp16):
        raise vkncnn.LayerError("layer relu0 (ReLU): out of memory")

    monkeypatch.setattr(cmd_convert, "reference_torchscript", lambda source, inputs: ("t", [inputs[0]]))
    monkeypatch.setattr(cmd_convert, "run_vkncnn", no_gpu_for_you)
    assert cli.main(["convert", str(model), "--shape", "1,4"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "net.ncnn.param does not run on the numpy path: layer relu0 (ReLU): out of memory" in line


def test_errors_of_nan_and_zero_outputs():
    nan = np.float32("nan")
    assert cmd_convert.errors(np.array([1.0, nan]), np.array([1.0, nan])) == (0.0, 0.0)
    assert cmd_convert.errors(np.array([1.0, nan]), np.array([1.0, 2.0])) == (float("inf"), float("inf"))
    assert cmd_convert.errors(np.zeros(3), np.zeros(3)) == (0.0, 0.0)
    assert cmd_convert.errors(np.array([0.5, 1.0]), np.array([0.0, -2.0])) == (3.0, 1.5)
    assert cmd_convert.ncnn_shape((1, 3, 8, 8)) == (3, 8, 8) and cmd_convert.ncnn_shape((5,)) == (5,)


# -- the real pnnx on a traced PyTorch module ---------------------------------------------------
@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    torch = pytest.importorskip("torch")
    pytest.importorskip("pnnx")
    if cmd_convert.find_pnnx() is None:
        pytest.skip("the pnnx package has no executable here")

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8 * 6 * 6, 10)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).flatten(1))

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("user")
    path = folder / "tiny.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is deprecated; pnnx reads its files
        torch.jit.trace(Tiny().eval(), torch.rand(1, 3, 6, 6)).save(str(path))
    return path


def _rows(out: str) -> dict[str, float]:
    return {path: float(rel) for path, rel in re.findall(r"^out0\s+10\s+(\w+)\s+\S+\s+(\S+)\s+ok$", out, re.M)}


def test_a_traced_module_converts_and_matches_torch(traced, capsys):
    folder = traced.parent
    source = traced.read_bytes()
    assert cli.main(["convert", str(traced), "--shape", "[1,3,6,6]"]) == 0
    out = capsys.readouterr().out
    rel = _rows(out)
    assert set(rel) == ({"numpy", "gpu"} if vkncnn.get_gpu_count() > 0 else {"numpy"}), out
    assert max(rel.values()) < 2e-3  # fp16 weights (and fp16 storage on the GPU)
    assert sorted(p.name for p in folder.iterdir()) == ["tiny.ncnn.bin", "tiny.ncnn.param", "tiny.pt"]
    assert traced.read_bytes() == source
    # pnnx's names for the blobs, which the check relies on
    net = vkncnn.Net()
    net.load_param(str(folder / "tiny.ncnn.param"))
    assert (net.input_names(), net.output_names()) == (["in0"], ["out0"])


def test_fp32_weights_match_torch_closely_and_a_tight_tol_fails(traced, tmp_path, capsys):
    """No --shape: the traced module carries it. fp32 weights, fp32 throughout: ~1e-7."""
    assert cli.main(["convert", str(traced), "--fp32", "-o", str(tmp_path)]) == 0
    rel = _rows(capsys.readouterr().out)
    assert rel and max(rel.values()) < 1e-5
    half = tmp_path / "half"
    assert cli.main(["convert", str(traced), "-o", str(half), "--tol", "1e-9"]) == 1
    assert "relative error" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / "tiny.ncnn.bin").stat().st_size > 1.9 * (half / "tiny.ncnn.bin").stat().st_size


def test_a_shape_the_trace_refuses_is_pnnx_s_error(traced, tmp_path, capsys):
    assert cli.main(["convert", str(traced), "--shape", "1,3,9,9", "-o", str(tmp_path), "--no-check"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "pnnx failed" in line and "[1,3,9,9]" in line
    assert list(tmp_path.iterdir()) == []


def test_an_onnx_model_matches_onnxruntime(traced, tmp_path, capsys):
    """The same module exported to ONNX; checked against onnxruntime. pnnx writes its
    .pnnxsim.onnx beside its input: the user's folder must not get it."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")  # torch's ONNX exporter needs it
    pytest.importorskip("onnxruntime")
    source = tmp_path / "tiny.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on its own deprecation
        torch.onnx.export(torch.jit.load(str(traced)), (torch.rand(1, 3, 6, 6),), str(source), dynamo=False)
    assert cli.main(["convert", str(source), "--fp32"]) == 0
    out = capsys.readouterr().out
    assert "reference onnxruntime" in out
    rel = _rows(out)
    assert rel and max(rel.values()) < 1e-5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.ncnn.bin", "tiny.ncnn.param", "tiny.onnx"]
