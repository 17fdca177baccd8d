"""Batches through whole pnnx models (tests/fixtures/): a batch of 3 fed as ncnn's batched
Mat comes back batched, equal to torch's answer for each item (fixtures exported with a
variable batch hold it in io_batch3.npz: their Reshapes move the batch between axes) and
equal to each item run alone (every fixture), on the numpy path and on the Vulkan path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vkncnn
from tests.oracle import rel_err

FIXTURES = Path(__file__).parent / "fixtures"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "model.param").exists())
BATCHED = [n for n in NAMES if (FIXTURES / n / "io_batch3.npz").exists()]
PATHS = [False, pytest.param(True, marks=pytest.mark.gpu, id="gpu")]


def _gpu_available() -> bool:
    try:
        return vkncnn.get_gpu_count() > 0
    except vkncnn.Error:
        return False


def _net(name: str, gpu: bool) -> vkncnn.Net:
    if gpu and not _gpu_available():
        pytest.skip("no Vulkan device")
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
    net.load_param(str(FIXTURES / name / "model.param"))
    net.load_model(str(FIXTURES / name / "model.bin"))
    return net


def _run(net, inputs: dict, outputs: list[str], batch_index=None) -> dict:
    with net.create_extractor() as ex:
        for k, v in inputs.items():
            ex.input(k, vkncnn.Mat(v) if batch_index is None else vkncnn.Mat(v, batch_index=batch_index))
        return {k: ex.extract(k)[1] for k in outputs}


@pytest.mark.parametrize("gpu", PATHS)
@pytest.mark.parametrize("name", BATCHED)
def test_batch_of_three_matches_torch(name, gpu):
    with np.load(FIXTURES / name / "io_batch3.npz") as z:
        data = {k: z[k] for k in z.files}
    inputs = {k: v for k, v in data.items() if k.startswith("in")}
    outputs = [k for k in data if k.startswith("out") and not k.endswith("_n")]
    got = _run(_net(name, gpu), inputs, outputs, batch_index=0)
    for k in outputs:
        assert got[k].n == int(data[f"{k}_n"]) == 3
        assert rel_err(got[k].numpy(batch_index=0), data[k]) <= 1e-4, f"{name}:{k}"


@pytest.mark.parametrize("gpu", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_batch_of_three_equals_each_item_alone(name, gpu):
    with np.load(FIXTURES / name / "io.npz") as z:
        io = {k: z[k] for k in z.files}
    rng = np.random.default_rng(3)
    batch = {k: np.stack([v] + [rng.uniform(-1, 1, v.shape).astype(np.float32) for _ in range(2)])
             for k, v in io.items() if k.startswith("in")}
    outputs = [k for k in io if k.startswith("out")]
    net = _net(name, gpu)
    got = _run(net, batch, outputs, batch_index=0)
    for b in range(3):
        alone = _run(net, {k: v[b] for k, v in batch.items()}, outputs)
        for k in outputs:
            assert got[k].n == 3
            assert rel_err(got[k].numpy(batch_index=0)[b], alone[k].numpy()) <= 1e-5, f"{name}:{k} item {b}"


@pytest.mark.gpu
def test_a_batch_replays_one_recorded_plan_on_the_gpu():
    net = _net("conv_bn", gpu=True)
    with np.load(FIXTURES / "conv_bn" / "io.npz") as z:
        x = z["in0"]
    batch = {"in0": np.stack([x, -x, 2 * x, 0.5 * x])}
    first = _run(net, batch, ["out0"], batch_index=0)["out0"]
    recorded = net.gpu.plans_recorded
    assert recorded == 1  # the first item recorded it, the other three replayed it
    again = _run(net, batch, ["out0"], batch_index=0)["out0"]
    assert net.gpu.plans_recorded == recorded
    np.testing.assert_array_equal(first.numpy(batch_index=0), again.numpy(batch_index=0))
