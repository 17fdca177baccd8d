"""Real ncnn fed with typed inputs: int32 arrays go in as int32 Mats.

The shared oracle converts every input to float32. Dequantize and Requantize read
their input as int32 accumulators, which pyncnn's Mat(ndarray) keeps as raw int32
bits; vkncnn blobs are float32 holding the same integers. This runs ncnn with the
arrays' own dtypes, so both sides see the same numbers.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from tests.oracle import bin_bytes, layer_param_text, ncnn, rel_err, run_vkncnn


def run_ncnn_typed(param_text: str, weights: bytes, inputs: dict, outputs: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as d:
        p, b = os.path.join(d, "m.param"), os.path.join(d, "m.bin")
        with open(p, "w") as f:
            f.write(param_text)
        with open(b, "wb") as f:
            f.write(weights)
        net = ncnn.Net()
        o = net.opt
        o.use_vulkan_compute = False
        o.use_fp16_packed = o.use_fp16_storage = o.use_fp16_arithmetic = o.use_bf16_storage = False
        o.num_threads = 1
        assert net.load_param(p) == 0, "ncnn rejected the param"
        assert net.load_model(b) == 0, "ncnn rejected the model"
        ex = net.create_extractor()
        ex.set_light_mode(False)
        keep = []
        for name, arr in inputs.items():
            m = ncnn.Mat(np.ascontiguousarray(arr)).clone()
            keep.append(m)
            ex.input(name, m)
        result = {}
        for name in outputs:
            ret, out = ex.extract(name)
            assert ret == 0, f"ncnn extract({name}) returned {ret}"
            empty = out.dims == 0 or out.w * out.h * out.d * out.c == 0
            result[name] = np.zeros((0,), np.float32) if empty else np.array(out, dtype=np.float32, copy=True)
        del ex
        net.clear()
        return result


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


def needs_gpu(fn):
    """Skip when no Vulkan device exists (CI sets VKNCNN_REQUIRE_GPU=1 to fail instead)."""
    import pytest

    from vkncnn.gpu import instance

    return pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")(fn)
