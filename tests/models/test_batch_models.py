"""A batch of 3 extracted at once equals each item extracted alone: every benchmark model,
on the numpy path (exactly; the three largest `-m slow`) and on the Vulkan path (fp32, within the GPU model tests'
1e-3 of the numpy answer; lavapipe in CI, the largest models `-m slow`).

The batch goes in as ncnn's batched Mat (`Mat(array, batch_index=0)`) and every output
comes back batched (`out.n == 3`, `out.numpy(batch_index=0)`). Detection layers keep a
different number of boxes per image; for those models the tensors entering the detection
layer are compared, and the final output must either agree item by item or be refused
with a ShapeError naming the layer (never a mix of items).
"""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from tests.models.common import model_io, model_weights, output_err
from vkncnn.tools.benchmark_models import INPUT_SHAPES
from vkncnn.tools.compare_models import detection_head_inputs

BATCH = 3
# seconds per test on lavapipe, 2-core machine: these run with -m slow (the CI suite has a
# 10-minute budget); the numpy-path test covers every model in CI
SLOW_ON_LAVAPIPE = {"vgg16": 56, "vision_transformer": 50, "yolov4-tiny": 15, "mobilenet_yolo": 12, "resnet50": 10,
                    "mobilenet_ssd": 8.3, "squeezenet_ssd": 7.9, "nanodet_m": 7.6, "mobilenetv2_yolov3": 5.8,
                    "resnet18": 5.5, "googlenet": 5.2, "alexnet": 5.1}


def _gpu_available() -> bool:
    try:
        return vkncnn.get_gpu_count() > 0
    except vkncnn.Error:
        return False


def _net(text: str, weights: bytes, gpu: bool) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
    net.load_param_mem(text)
    net.load_model(weights)
    return net


def _batched_inputs(name: str, inputs: dict) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {k: np.stack([v] + [rng.uniform(-1, 1, v.shape).astype(np.float32) for _ in range(BATCH - 1)])
            for k, v in inputs.items()}


def _check_model(name: str, gpu: bool) -> None:
    text, inputs, outputs = model_io(name)
    heads_in, heads_out = detection_head_inputs(text)
    batch = _batched_inputs(name, inputs)
    singles = []
    cpu_net = _net(text, model_weights(name), gpu=False)
    for b in range(BATCH):
        with cpu_net.create_extractor() as ex:
            for k, v in batch.items():
                ex.input(k, vkncnn.Mat(v[b]))
            singles.append({blob: ex.extract(blob)[1].numpy() for blob in outputs + heads_in})
    net = _net(text, model_weights(name), gpu) if gpu else cpu_net
    # the numpy path: BLAS blocks a batch's products as it likes (1.2e-6 seen on an AMD EPYC)
    tol = 1e-3 if gpu else 1e-5
    with net.create_extractor() as ex:
        for k, v in batch.items():
            ex.input(k, vkncnn.Mat(v, batch_index=0))
        for blob in heads_in + outputs:
            same_shape = len({s[blob].shape for s in singles}) == 1
            if not same_shape:
                assert blob in heads_out, f"{name}:{blob} items differ in shape outside a detection layer"
                with pytest.raises(vkncnn.ShapeError, match="different shapes"):
                    ex.extract(blob)
                continue
            out = ex.extract(blob)[1]
            assert out.n == BATCH, f"{name}:{blob} came back with n={out.n}"
            got = out.numpy(batch_index=0)
            for b in range(BATCH):
                err = output_err(got[b], singles[b][blob])
                assert got[b].shape == singles[b][blob].shape and err <= tol, f"{name}:{blob} item {b}: {err:.2e}"


# seconds on the numpy path (2 cores): -m slow, the suite's 10-minute budget
SLOW_ON_NUMPY = {"vgg16": 9.1, "vision_transformer": 4.1, "alexnet": 2.6}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_ON_NUMPY else n
                                  for n in INPUT_SHAPES])
def test_batch_of_three_equals_each_item_alone_on_cpu(name):
    _check_model(name, gpu=False)


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_available(), reason="no Vulkan device")
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_ON_LAVAPIPE else n
                                  for n in INPUT_SHAPES])
def test_batch_of_three_equals_each_item_alone_on_gpu(name):
    _check_model(name, gpu=True)
