"""The main job: `python -m vkncnn.tools.digits` classifies sklearn's test digits.

Runs in-process on the CPU path; checks the accuracy and that every logit matches real
ncnn running the same model files. Where a Vulkan device exists, the GPU path (default
options, fp16 storage) must agree with the CPU path within 1e-2.
"""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from tests.oracle import ncnn, rel_err
from vkncnn.tools import digits


@pytest.fixture(scope="module")
def cpu_result() -> digits.DigitsResult:
    return digits.run_digits(use_gpu=False)


def ncnn_logits(images: np.ndarray) -> np.ndarray:
    """The same model in real ncnn, fp32 throughout (as tests/oracle.run_ncnn sets it up)."""
    assert ncnn is not None, "pip install ncnn to use the oracle"
    net = ncnn.Net()
    o = net.opt
    o.use_vulkan_compute = False
    o.use_fp16_packed = o.use_fp16_storage = o.use_fp16_arithmetic = o.use_bf16_storage = False
    o.num_threads = 1  # 360 tiny inferences: threads only add overhead
    assert net.load_param(str(digits.DATA_DIR / "digits.param")) == 0
    assert net.load_model(str(digits.DATA_DIR / "digits.bin")) == 0
    out = np.empty((len(images), 10), np.float32)
    for i, image in enumerate(images):
        ex = net.create_extractor()
        ex.input(digits.INPUT, ncnn.Mat(np.ascontiguousarray(image[None])).clone())
        ret, mat = ex.extract(digits.OUTPUT)
        assert ret == 0
        out[i] = np.array(mat).reshape(-1)
        del ex
    net.clear()
    return out


def test_test_set_shape():
    images, labels = digits.load_test_set()
    assert images.dtype == np.float32 and images.shape[1:] == (8, 8) and len(images) >= 300
    assert labels.dtype == np.int64 and labels.shape == (len(images),)
    assert 0.0 <= images.min() and images.max() <= 1.0
    assert set(np.unique(labels)) == set(range(10))


def test_cpu_accuracy(cpu_result):
    assert cpu_result.path == "cpu"
    assert cpu_result.logits.shape == (len(cpu_result.labels), 10)
    assert cpu_result.accuracy >= 0.95, f"accuracy {cpu_result.accuracy:.4f} < 0.95"


def test_cpu_logits_match_ncnn(cpu_result):
    images, _ = digits.load_test_set()
    err = rel_err(cpu_result.logits, ncnn_logits(images))
    assert err <= 1e-4, f"vkncnn logits differ from ncnn: relative error {err:.3g}"


def test_report_lines(cpu_result):
    lines: list[str] = []
    digits.report(cpu_result, show=3, out=lines.append)
    assert lines[0].startswith("path: cpu")
    assert len(lines) == 1 + 1 + 3 + 1  # path, header, 3 predictions, accuracy
    assert lines[-1].startswith(f"accuracy: {cpu_result.accuracy:.4f}")


def test_cli_exit_codes(capsys):
    assert digits.main(["--cpu", "--show", "2"]) == 0
    assert "accuracy:" in capsys.readouterr().out
    assert digits.main(["--cpu", "--show", "0", "--threshold", "1.01"]) == 1
    assert "FAIL" in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_matches_cpu(cpu_result):
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    gpu_result = digits.run_digits(use_gpu=True)
    assert gpu_result.path == "gpu"
    err = rel_err(gpu_result.logits, cpu_result.logits)
    assert err <= 1e-2, f"GPU logits differ from the CPU path: relative error {err:.3g}"
    assert gpu_result.accuracy >= 0.95
