"""Run the same one-layer (or whole) model in real ncnn and in vkncnn, and compare.

Real ncnn (`pip install ncnn`) is the judge. It runs with fp16/bf16 off so it
computes in fp32 like our reference path; inputs go in as `ncnn.Mat(arr).clone()`
because its binding does not keep numpy memory alive.
"""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from vkncnn.gpu.vulkan import instance
from vkncnn.testing import layer_param_text, param_entries, rel_err, weights_bin  # noqa: F401
from vkncnn.tools.ncnn_oracle import ncnn, run_ncnn  # noqa: F401


def cpu_has_avx512_bf16() -> bool:
    """Does this CPU convert to bf16 in hardware? x86 ncnn then rounds ties to even (as vkncnn
    does); without it, its conversion rounds ties up."""
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_bf16" in f.read()
    except OSError:
        return False


def raw(a) -> tuple[np.ndarray, bool]:
    """A weight written without a storage flag (ncnn load type 1)."""
    return np.asarray(a, np.float32), False


def tagged(a) -> tuple[np.ndarray, bool]:
    """A weight written with the fp32 storage flag (ncnn load type 0)."""
    return np.asarray(a, np.float32), True


bin_bytes = weights_bin

# GPU cases skip where no Vulkan device exists; CI sets VKNCNN_REQUIRE_GPU=1, which fails the
# whole run instead (tests/conftest.py), so on CI they always run
needs_gpu = pytest.mark.skipif(instance.get_gpu_count() == 0,
                               reason=f"no Vulkan device ({instance.unavailable_reason()})")


def run_vkncnn(param_text: str, weights: bytes, inputs: dict, outputs: list[str], gpu: bool = False,
               fp16: bool = False, packing: bool = True, lightmode: bool = True) -> dict[str, np.ndarray]:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = False
    net.opt.use_packing_layout = packing
    net.load_param_mem(param_text)
    net.load_model(weights)
    with net.create_extractor() as ex:
        ex.set_light_mode(lightmode)
        for name, arr in inputs.items():
            ex.input(name, vkncnn.Mat(arr))
        return {name: ex.extract(name)[1].numpy() for name in outputs}


def layer_outputs(type_name: str, params: dict, weights, inputs: list[np.ndarray], n_outputs: int = 1,
                  gpu: bool = False, fp16: bool = False) -> tuple[dict, dict]:
    """Run one layer in ncnn and in vkncnn: (ncnn's outputs, ours), by name (out0, out1, ...)."""
    text = layer_param_text(type_name, params, len(inputs), n_outputs)
    wb = bin_bytes(weights)
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    names = [f"out{i}" for i in range(n_outputs)]
    return run_ncnn(text, wb, feed, names), run_vkncnn(text, wb, feed, names, gpu=gpu, fp16=fp16)


def check_layer(type_name: str, params: dict, weights, inputs: list[np.ndarray], n_outputs: int = 1,
                tol: float = 1e-4, gpu: bool = False, fp16: bool = False) -> float:
    """Run one layer in ncnn and vkncnn; assert every output agrees within tol; return max error."""
    want, got = layer_outputs(type_name, params, weights, inputs, n_outputs, gpu, fp16)
    worst = 0.0
    for name in want:
        assert got[name].shape == want[name].shape, (
            f"{type_name} {params}: {name} shape {got[name].shape} != ncnn {want[name].shape}")
        err = rel_err(got[name], want[name])
        assert err <= tol, f"{type_name} {params} inputs {[x.shape for x in inputs]}: {name} err {err:.3g} > {tol}"
        worst = max(worst, err)
    return worst


def rand(*shape, seed: int = 0, lo: float = -1.2, hi: float = 1.2) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)
