"""docs/layers.md is what `python -m vkncnn.tools.dev.layer_index` writes from the code now.

Fails when a layer, kernel, shader or test was added or moved without regenerating the index.
"""

import subprocess
import sys

from vkncnn.tools.dev import layer_index


def test_layer_index_is_current():
    # a fresh interpreter: other tests register custom layers in this process's registry
    done = subprocess.run([sys.executable, "-m", "vkncnn.tools.dev.layer_index", "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (
        f"docs/layers.md is stale; run `{layer_index.COMMAND}`\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def test_index_finds_a_layer_s_files():
    rows = {row.type_name: row for row in layer_index.collect(layer_index.repo_root())}
    softmax = rows["Softmax"]
    root = layer_index.repo_root()
    assert softmax.module_path.relative_to(root).as_posix().endswith("layers/softmax.py")
    assert any(names == ["softmax"] for _, names in softmax.kernels)
    assert "softmax.comp" in {p.name for p in softmax.shaders}
    assert softmax.tests and softmax.tests[0].name == "test_softmax.py"
    assert softmax.params == "0 1"
    assert set(layer_index.LAYER_TYPE_NAMES) <= set(rows)  # ncnn's unimplemented types are listed too


def test_check_reports_a_stale_index(monkeypatch, capsys):
    monkeypatch.setattr(layer_index, "collect", lambda root: [])
    monkeypatch.setattr(layer_index, "render", lambda *args: "not what is on disk\n")
    assert layer_index.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().out
