"""Every benchmark model on the Vulkan path (lavapipe in CI) against real ncnn and numpy.

fp32 storage must agree with real ncnn within 1e-3 relative, fp16 storage within 1e-2.
"""

import pytest

from tests.models.common import model_io, model_weights, output_err
from tests.oracle import run_ncnn, run_vkncnn
from vkncnn.gpu import instance
from vkncnn.tools.benchmark_models import INPUT_SHAPES

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

_reference_cache: dict = {}


def _reference(name):
    if name not in _reference_cache:
        text, inputs, outputs = model_io(name)
        _reference_cache.clear()  # keep one model's outputs at a time
        _reference_cache[name] = (text, inputs, outputs, run_ncnn(text, model_weights(name), inputs, outputs))
    return _reference_cache[name]


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", list(INPUT_SHAPES))
def test_model_on_gpu_matches_ncnn(name, fp16):
    text, inputs, outputs, want = _reference(name)
    got = run_vkncnn(text, model_weights(name), inputs, outputs, gpu=True, fp16=fp16)
    tol = 1e-2 if fp16 else 1e-3
    for out in outputs:
        assert got[out].shape == want[out].shape, f"{name}:{out} shape {got[out].shape} != {want[out].shape}"
        err = output_err(got[out], want[out])
        print(f"{name}:{out} {'fp16' if fp16 else 'fp32'} max rel err {err:.2e}")
        assert err <= tol, f"{name}:{out} rel err {err:.3g} > {tol}"
