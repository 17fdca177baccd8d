"""Real ncnn fed with typed inputs: int32 arrays go in as int32 Mats.

The shared oracle converts every input to float32. Dequantize and Requantize read
their input as int32 accumulators, which pyncnn's Mat(ndarray) keeps as raw int32
bits; vkncnn blobs are float32 holding the same integers. This runs ncnn with the
arrays' own dtypes, so both sides see the same numbers.
"""

from __future__ import annotations

import numpy as np

from tests.oracle import bin_bytes, layer_param_text, needs_gpu, rel_err, run_ncnn, run_vkncnn  # noqa: F401


def run_ncnn_typed(param_text: str, weights: bytes, inputs: dict, outputs: list[str]) -> dict:
    return run_ncnn(param_text, weights, inputs, outputs, keep_dtype=True)


def check_layer_typed(type_name: str, params: dict, weights, inputs: list[np.ndarray], tol: float = 1e-4,
                      gpu: bool = False) -> np.ndarray:
    """check_layer for integer inputs: ncnn gets the typed arrays, vkncnn their float32 values."""
    text = layer_param_text(type_name, params, len(inputs), 1)
    wb = bin_bytes(weights)
    want = run_ncnn_typed(text, wb, {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])["out0"]
    got = run_vkncnn(text, wb, {f"in{i}": x.astype(np.float32) for i, x in enumerate(inputs)}, ["out0"],
                     gpu=gpu)["out0"]
    assert got.shape == want.shape, f"{type_name} {params}: shape {got.shape} != ncnn {want.shape}"
    err = rel_err(got, want)
    assert err <= tol, f"{type_name} {params} {[x.shape for x in inputs]}: err {err:.3g} > {tol}"
    return got
