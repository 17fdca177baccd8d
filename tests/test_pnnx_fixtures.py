"""Whole models converted by pnnx (tests/fixtures/<name>/, written by tools/dev/make_fixtures.py).

Each fixture holds pnnx's model.param/.bin and io.npz with a fixed input and PyTorch's
output. vkncnn must reproduce torch within 1e-4 (relative to the output's scale) and
agree with real ncnn on the same files. These are the integration tests for the layers
pnnx writes most often; test_fixture_layer_types lists which.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vkncnn
from tests.oracle import rel_err, run_ncnn

FIXTURES = Path(__file__).parent / "fixtures"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "model.param").exists())
TOL = 1e-4


def load_fixture(name: str) -> tuple[str, bytes, dict, dict]:
    d = FIXTURES / name
    with np.load(d / "io.npz") as z:
        arrays = {k: z[k] for k in z.files}
    inputs = {k: v for k, v in arrays.items() if k.startswith("in")}
    outputs = {k: v for k, v in arrays.items() if k.startswith("out")}
    return (d / "model.param").read_text(), (d / "model.bin").read_bytes(), inputs, outputs


def run_vkncnn(param: str, weights: bytes, inputs: dict, names: list[str], gpu: bool,
               warm_up: bool = False) -> dict:
    """fp32 throughout. warm_up: first run other input values through the same Net, so a
    result cached from an earlier extract (a replayed GPU plan) cannot pass for the answer."""
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
    net.load_param_mem(param)
    net.load_model(weights)
    try:
        if warm_up:
            net.run({k: (v * -0.5 + 0.25).astype(np.float32) for k, v in inputs.items()}, names)
        return net.run(inputs, names)
    finally:
        net.clear()


def assert_close(got: dict, want: dict, what: str, tol: float = TOL) -> None:
    for name, ref in want.items():
        assert got[name].shape == ref.shape, f"{what} {name}: shape {got[name].shape} != {ref.shape}"
        err = rel_err(got[name], ref)
        assert err <= tol, f"{what} {name}: relative error {err:.3g} > {tol}"


def test_fixtures_present():
    assert len(NAMES) >= 5, f"expected the pnnx fixtures under {FIXTURES}, found {NAMES}"
    for name in NAMES:
        size = sum(f.stat().st_size for f in (FIXTURES / name).iterdir())
        assert size < 200_000, f"fixture {name} is {size} bytes; keep fixtures small"


@pytest.mark.parametrize("name", NAMES)
def test_cpu_matches_torch_and_ncnn(name):
    param, weights, inputs, torch_out = load_fixture(name)
    names = sorted(torch_out)
    got = run_vkncnn(param, weights, inputs, names, gpu=False, warm_up=True)
    assert_close(got, torch_out, f"{name} vkncnn vs torch")
    assert_close(got, run_ncnn(param, weights, inputs, names), f"{name} vkncnn vs ncnn")


@pytest.mark.parametrize("name", NAMES)
def test_ncnn_matches_torch(name):
    """Guards the fixture itself: if real ncnn disagrees with torch, the files are bad."""
    param, weights, inputs, torch_out = load_fixture(name)
    assert_close(run_ncnn(param, weights, inputs, sorted(torch_out)), torch_out, f"{name} ncnn vs torch")


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gpu_fp32_matches_torch(name):
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    param, weights, inputs, torch_out = load_fixture(name)
    got = run_vkncnn(param, weights, inputs, sorted(torch_out), gpu=True, warm_up=True)
    assert_close(got, torch_out, f"{name} vkncnn GPU (fp32 storage) vs torch")


def test_fixture_layer_types():
    """The layer types the fixtures exercise; a regenerated fixture set must keep covering them."""
    used = set()
    for name in NAMES:
        for line in (FIXTURES / name / "model.param").read_text().splitlines()[2:]:
            if line.strip():
                used.add(line.split()[0])
    expected = {"BinaryOp", "Clip", "Concat", "Convolution", "Convolution1D", "ConvolutionDepthWise",
                "Deconvolution", "GELU", "Gemm", "HardSigmoid", "HardSwish", "InnerProduct", "Input",
                "Interp", "LayerNorm", "MultiHeadAttention", "PReLU", "Padding", "Permute",
                "PixelShuffle", "Pooling", "Pooling1D", "Reduction", "Reshape", "ShuffleChannel",
                "Sigmoid", "Slice", "Softmax", "Split", "Swish", "TanH", "UnaryOp"}
    assert expected <= used, f"fixtures no longer cover {sorted(expected - used)}"
