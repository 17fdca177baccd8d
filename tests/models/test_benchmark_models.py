"""Every benchmark model, seeded random weights: vkncnn's numpy path against real ncnn."""

import pytest

from tests.models.common import model_io, model_weights, output_err
from tests.oracle import run_ncnn, run_vkncnn
from vkncnn.tools.benchmark_models import INPUT_SHAPES
from vkncnn.tools.compare_models import softmax_logits


@pytest.mark.parametrize("name", list(INPUT_SHAPES))
def test_model_matches_ncnn_on_cpu(name):
    text, inputs, outputs = model_io(name)
    outputs = outputs + softmax_logits(text)
    weights = model_weights(name)
    want = run_ncnn(text, weights, inputs, outputs)
    got = run_vkncnn(text, weights, inputs, outputs, gpu=False)
    for out in outputs:
        assert got[out].shape == want[out].shape, f"{name}:{out} shape {got[out].shape} != {want[out].shape}"
        err = output_err(got[out], want[out])
        print(f"{name}:{out} max rel err {err:.2e}")
        assert err <= 1e-3, f"{name}:{out} rel err {err:.3g}"
