"""The scripts in examples/ run as documented and print results that make sense.

Each script runs as a user would start it (a child process, in a temporary folder); the
LLM decoder runs in this process, so that its random weights (the slow part) are drawn
once for the script and for the check that its KV cache gives what a full prefill gives.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vkncnn

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(name: str, *args: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def import_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested_and_documented():
    scripts = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    assert scripts == ["classify_image", "custom_shader", "detect_objects", "generate_text", "run_llm_decoder"]
    for name in scripts:
        text = (EXAMPLES / f"{name}.py").read_text()
        assert text.startswith('"""') and f"python3 examples/{name}.py" in text, f"{name}: docstring says how to run it"


def test_classify_image_generated_and_from_file(tmp_path):
    # test digit #1 is a 3: the generated image, then the same image read back from a file
    out = run_example("classify_image.py", "--index", "1", "--save", "digit.pgm", cwd=tmp_path)
    assert "predicted digit: 3 (label 3)" in out
    assert (tmp_path / "digit.pgm").read_bytes().startswith(b"P5\n64 64\n255\n")
    out = run_example("classify_image.py", "digit.pgm", cwd=tmp_path)
    assert "predicted digit: 3" in out
    top = re.search(r"top 3: (\d) \(([\d.]+)\)", out)
    assert top and top.group(1) == "3" and float(top.group(2)) > 0.9


def test_classify_image_agrees_with_labels():
    example = import_example("classify_image")
    net = example.load_net(gpu=False)
    hits = [int(example.classify(net, px).argmax()) == label
            for px, label in (example.test_image(i) for i in range(40))]
    assert sum(hits) >= 38  # the model scores ~98% on this held-out set


def test_detect_objects_writes_boxes_that_obey_nms(tmp_path):
    out = run_example("detect_objects.py", "-o", "boxes", "--threshold", "0.3", cwd=tmp_path)
    n = int(re.search(r"(\d+) boxes above", out).group(1))
    rows = np.loadtxt(tmp_path / "boxes.txt", ndmin=2)
    assert n == len(rows) > 0  # seeded random weights put the best scores near 0.4
    cls, score, x1, y1, x2, y2 = rows.T
    assert np.all(score > 0.3) and np.all(np.diff(score) <= 0)
    assert np.all((0 <= x1) & (x1 < x2) & (x2 <= 480) & (0 <= y1) & (y1 < y2) & (y2 <= 320))
    assert np.all((cls >= 0) & (cls < 80) & (cls == np.round(cls)))
    example = import_example("detect_objects")
    for i in range(len(rows)):  # no kept box overlaps a better one of its class beyond the IoU limit
        better = rows[:i][rows[:i, 0] == rows[i, 0]]
        if len(better):
            assert example.iou(rows[i, 2:], better[:, 2:]).max() <= 0.45 + 1e-3


def test_detect_objects_letterbox_keeps_aspect():
    example = import_example("detect_objects")
    mat, scale, left, top = example.letterbox(np.zeros((100, 200, 3), np.uint8))
    x = mat.numpy()
    assert x.shape == (3, 352, 352) and scale == pytest.approx(1.76)
    assert (left, top) == (0, 88)
    np.testing.assert_allclose(x[:, :88], 114 / 255, rtol=1e-6)  # the border
    np.testing.assert_allclose(x[:, 88:264], 0)  # the image


def test_custom_shader(tmp_path):
    out = run_example("custom_shader.py", "--size", "5000", cwd=tmp_path)
    if vkncnn.get_gpu_count() == 0:
        assert "no Vulkan device" in out
        return
    assert "FAIL" not in out
    assert "leaky ReLU, 5000 values, fp32 storage: max error 0.00e+00 (PASS" in out or "part 1 skipped" in out
    if "part 2 skipped" not in out:
        assert "accumulate y += x, 5000 values, recorded once and replayed 10 + 10 times: PASS" in out
        timed = re.search(r"^leaky ReLU, 5000 values: GPU ([\d.]+) us per dispatch \(median of 50; .*wall ([\d.]+) us$",
                          out, re.M)
        assert timed and float(timed.group(1)) > 0 and float(timed.group(2)) > 0
    assert re.search(r"^Convolution .*fp32-pack1=.* PASS$", out, re.M)


def test_generate_text_greedy_sampled_and_streamed(tmp_path):
    from vkncnn.llm import load_generator
    from vkncnn.tools.cmd_generate import TINY_LM_DIR

    out = run_example("generate_text.py", "--prompt", "The ", "--max-new-tokens", "30", "--seed", "4", cwd=tmp_path)
    gen = load_generator(TINY_LM_DIR)
    greedy = "The " + gen.generate_text("The ", 30)
    sampled = "The " + gen.generate_text("The ", 30, temperature=0.8, top_k=20, top_p=0.95, seed=4)
    lines = out.splitlines()
    assert lines[0].startswith("loaded tiny_lm") and "3 layers, numpy path" in lines[0]
    assert lines[2] == f"  {greedy!r}" and lines[4] == f"  {sampled!r}"
    assert out.split("character at a time):\n", 1)[1] == "  " + sampled.replace("\n", "\n  ") + "\n"


def test_run_llm_decoder_greedy_steps_match_full_prefill(capsys):
    example = import_example("run_llm_decoder")
    try:
        assert example.main(["--prompt", "3,14,15", "--steps", "3"]) == 0
        out = capsys.readouterr().out
        ids = [int(t) for t in re.search(r"generated token ids: ([\d,]+)", out).group(1).split(",")]
        assert len(ids) == 3 and all(0 <= t < 151936 for t in ids)
        assert "cache_k0 (14, 5, 64)" in out  # 3 prompt tokens + 2 decoded: the cache grew by one a step

        # the KV cache is exact: prompt, then one token, gives the logits of prefilling both at once
        dec = example.Decoder("qwen2.5_0.5b", gpu=False)  # the weights loaded by main(), reused
        assert dec.step([3, 14, 15]) == ids[0]
        assert dec.step([ids[0]]) == ids[1]
        stepped = dec.last_logits
        dec.reset()
        assert dec.step([3, 14, 15, ids[0]]) == ids[1]
        np.testing.assert_allclose(dec.last_logits, stepped, rtol=1e-3, atol=1e-3 * np.abs(stepped).max())
    finally:
        example.load.cache_clear()  # ~2 GB of weights
