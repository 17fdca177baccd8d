"""Every benchmark model on the Vulkan path (lavapipe in CI) against real ncnn.

fp32 storage must agree with real ncnn (fp32, CPU) within 1e-3 relative on every output.
fp16 storage within 3e-2 relative: rounding every stored activation to fp16 compounds
through a deep net (real ncnn's own Vulkan fp16 path is 2.8e-2 off its fp32 CPU result on
yolo-fastestv2, measured on lavapipe; ours 1.2e-2). For detection models fp16 is judged on the tensors
that enter the detection layer, because thresholds and NMS turn an fp16 rounding of a
score near a threshold into a different list of boxes, which says nothing about the GPU.
"""

import pytest

from tests.models.common import model_io, model_weights, output_err
from tests.oracle import run_ncnn, run_vkncnn
from vkncnn.gpu.vulkan import instance
from vkncnn.tools.benchmark_models import INPUT_SHAPES
from vkncnn.tools.compare_models import detection_head_inputs, softmax_logits

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

_reference_cache: dict = {}


def _compared_blobs(text: str, outputs: list[str], fp16: bool) -> list[str]:
    outputs = outputs + softmax_logits(text)
    if not fp16:
        return outputs
    head_inputs, head_outputs = detection_head_inputs(text)
    return [o for o in outputs if o not in head_outputs] + head_inputs


def _reference(name: str, blobs: list[str]):
    key = (name, tuple(blobs))
    if key not in _reference_cache:
        text, inputs, _ = model_io(name)
        _reference_cache.clear()  # keep one model's tensors at a time
        _reference_cache[key] = run_ncnn(text, model_weights(name), inputs, blobs)
    return _reference_cache[key]


# seconds on lavapipe (2 cores): the fp16 runs of the two largest models are -m slow, within
# the suite's 10-minute budget; their fp32 runs and every other model's fp16 run stay
SLOW_FP16 = {"vision_transformer": 32, "vgg16": 22}


@pytest.mark.parametrize("name,fp16", [
    pytest.param(name, fp16, id=f"{name}-{'fp16' if fp16 else 'fp32'}",
                 marks=pytest.mark.slow if fp16 and name in SLOW_FP16 else ())
    for name in INPUT_SHAPES for fp16 in (False, True)])
def test_model_on_gpu_matches_ncnn(name, fp16):
    text, inputs, outputs = model_io(name)
    blobs = _compared_blobs(text, outputs, fp16)
    want = _reference(name, blobs)
    got = run_vkncnn(text, model_weights(name), inputs, blobs, gpu=True, fp16=fp16)
    tol = 3e-2 if fp16 else 1e-3
    for blob in blobs:
        assert got[blob].shape == want[blob].shape, f"{name}:{blob} shape {got[blob].shape} != {want[blob].shape}"
        err = output_err(got[blob], want[blob])
        print(f"{name}:{blob} {'fp16' if fp16 else 'fp32'} max rel err {err:.2e}")
        assert err <= tol, f"{name}:{blob} rel err {err:.3g} > {tol}"
