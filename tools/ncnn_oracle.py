"""Real ncnn (pip `ncnn`) as the judge: run a .param/.bin pair in it, fp32 throughout.

Tools and tests only; the runtime never imports ncnn. Its fp16/bf16 options are off
so it computes in fp32 like our reference path; inputs go in as
`ncnn.Mat(arr).clone()` because its binding does not keep numpy memory alive, and
empty outputs are checked before conversion because converting one segfaults.

`run_ncnn_vulkan` runs real ncnn's own Vulkan path instead (fp16 storage and, by default,
fp16 arithmetic where the device has it): not a reference, but the error vkncnn's fp16
arithmetic is held to (its error against `run_ncnn`, on the same model and device).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

import numpy as np

try:
    import ncnn
except ImportError:  # pragma: no cover - optional
    ncnn = None


def mat_shape(m) -> tuple:
    """The numpy shape of an ncnn Mat, read from its dims and sizes (works for an empty one)."""
    return {0: (0,), 1: (m.w,), 2: (m.h, m.w), 3: (m.c, m.h, m.w), 4: (m.c, m.d, m.h, m.w)}[m.dims]


@contextlib.contextmanager
def _fp32_cpu_net(param_text: str, weights: bytes, num_threads: int, vulkan: bool = False,
                  fp16_arithmetic: bool = False):
    """Real ncnn's Net on the CPU in fp32, loaded from the param text and weight bytes (with
    `vulkan`: on its default Vulkan device, fp16 storage, fp16 arithmetic as asked)."""
    assert ncnn is not None, "pip install ncnn to use the oracle"
    with tempfile.TemporaryDirectory() as d:
        p, b = os.path.join(d, "m.param"), os.path.join(d, "m.bin")
        with open(p, "w") as f:
            f.write(param_text)
        with open(b, "wb") as f:
            f.write(weights)
        net = ncnn.Net()
        o = net.opt
        o.use_vulkan_compute = vulkan
        o.use_fp16_packed = o.use_fp16_storage = vulkan
        o.use_fp16_arithmetic = vulkan and fp16_arithmetic
        o.use_bf16_storage = False
        o.num_threads = num_threads
        assert net.load_param(p) == 0, "ncnn rejected the param"
        assert net.load_model(b) == 0, "ncnn rejected the model"
        yield net


def ncnn_vulkan_fp16_arithmetic() -> bool:
    """Whether real ncnn keeps fp16 arithmetic on for its default Vulkan device: its Net
    clears opt.use_fp16_arithmetic at load_param where the device lacks it (ncnn also prints
    `fp16-p/s/u/a=.../1` for the device at start)."""
    if ncnn is None or ncnn.get_gpu_count() == 0:
        return False
    text = "7767517\n2 2\nInput in0 0 1 in0\nReLU op 1 1 in0 out0\n"
    with _fp32_cpu_net(text, b"", 1, vulkan=True, fp16_arithmetic=True) as net:
        return bool(net.opt.use_fp16_arithmetic)


def run_ncnn_vulkan(param_text: str, weights: bytes, inputs: dict, outputs: list[str],
                    fp16_arithmetic: bool = True) -> dict[str, np.ndarray]:
    """Real ncnn on its Vulkan path, fp16 storage (and packed), fp16 arithmetic as asked."""
    return run_ncnn(param_text, weights, inputs, outputs, vulkan=True, fp16_arithmetic=fp16_arithmetic)


def run_ncnn(param_text: str, weights: bytes, inputs: dict, outputs: list[str],
             num_threads: int = 1, keep_dtype: bool = False, empty_dims: bool = False,
             vulkan: bool = False, fp16_arithmetic: bool = False) -> dict[str, np.ndarray]:
    """`keep_dtype`: inputs go in with their own dtype (int32 arrays as int32 Mats, which
    ncnn's Dequantize/Requantize read as accumulators) instead of as float32.
    `empty_dims`: an empty output keeps the shape its Mat's dims and sizes say (e.g. (3, 0, 5))
    instead of coming back as (0,).
    `vulkan`: real ncnn's Vulkan path with fp16 storage (see run_ncnn_vulkan), not the reference."""
    with _fp32_cpu_net(param_text, weights, num_threads, vulkan, fp16_arithmetic) as net:
        ex = net.create_extractor()
        ex.set_light_mode(False)  # several blobs may be asked for, intermediate ones too
        keep = []
        for name, arr in inputs.items():
            m = ncnn.Mat(np.ascontiguousarray(arr, None if keep_dtype else np.float32)).clone()
            keep.append(m)
            ex.input(name, m)
        result = {}
        for name in outputs:
            ret, out = ex.extract(name)
            assert ret == 0, f"ncnn extract({name}) returned {ret}"
            # the binding segfaults converting an empty Mat: check first
            empty = out.dims == 0 or out.w * out.h * out.d * out.c == 0
            if not empty:
                result[name] = np.array(out, dtype=np.float32, copy=True)
            else:
                result[name] = np.zeros(mat_shape(out) if empty_dims else (0,), np.float32)
        del ex
        net.clear()
        return result


def run_ncnn_batch(param_text: str, weights: bytes, inputs: dict, outputs: list[str]) -> dict:
    """Batched inputs: each value is an array whose axis 0 is the batch, fed as
    `ncnn.Mat(arr, batch_index=0)`. Returns {name: (ret, array of (n, *item) or None, n)}:
    ncnn's return code is kept, not asserted, so a test can check where ncnn refuses."""
    with _fp32_cpu_net(param_text, weights, 1) as net:
        ex = net.create_extractor()
        ex.set_light_mode(False)
        keep = []
        for name, arr in inputs.items():
            m = ncnn.Mat(np.ascontiguousarray(arr, np.float32), batch_index=0).clone()
            keep.append(m)
            ex.input(name, m)
        result = {}
        for name in outputs:
            ret, out = ex.extract(name)
            empty = ret != 0 or out.dims == 0 or out.w * out.h * out.d * out.c == 0
            arr = None if empty else np.array(out.numpy(batch_index=0), dtype=np.float32, copy=True)
            result[name] = (ret, arr, 0 if empty else out.n)
        del ex
        net.clear()
        return result
