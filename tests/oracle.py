"""Run the same one-layer (or whole) model in real ncnn and in vkncnn, and compare.

Real ncnn (`pip install ncnn`) is the judge. It runs with fp16/bf16 off so it
computes in fp32 like our reference path; inputs go in as `ncnn.Mat(arr).clone()`
because its binding does not keep numpy memory alive.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

import vkncnn

try:
    import ncnn  # the oracle, tests only
except ImportError:  # pragma: no cover - CI installs it
    ncnn = None

FLAG_FP32 = b"\0\0\0\0"


def raw(a) -> tuple[np.ndarray, bool]:
    """A weight written without a storage flag (ncnn load type 1)."""
    return np.asarray(a, np.float32), False


def tagged(a) -> tuple[np.ndarray, bool]:
    """A weight written with the fp32 storage flag (ncnn load type 0)."""
    return np.asarray(a, np.float32), True


def bin_bytes(weights) -> bytes:
    out = bytearray()
    for w in weights:
        arr, flagged = w if isinstance(w, tuple) else raw(w)
        if flagged:
            out += FLAG_FP32
        out += np.ascontiguousarray(arr, dtype="<f4").tobytes()
    return bytes(out)


def _fmt_value(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (float, np.floating)):
        s = repr(float(v))
        return s if any(c in s for c in ".eE") else s + ".0"
    return str(int(v))


def param_entries(params: dict) -> str:
    parts = []
    for k, v in sorted(params.items()):
        if isinstance(v, (list, tuple, np.ndarray)):
            vals = list(v)
            parts.append(f"{-23300 - k}={len(vals)}" + "".join("," + _fmt_value(x) for x in vals))
        else:
            parts.append(f"{k}={_fmt_value(v)}")
    return " ".join(parts)


def layer_param_text(type_name: str, params: dict, n_inputs: int, n_outputs: int = 1) -> str:
    """A .param with one Input per layer input, then the layer: in0.., out0.."""
    lines = [f"Input in{i} 0 1 in{i}" for i in range(n_inputs)]
    ins = " ".join(f"in{i}" for i in range(n_inputs))
    outs = " ".join(f"out{i}" for i in range(n_outputs))
    lines.append(f"{type_name} op {n_inputs} {n_outputs} {ins} {outs} {param_entries(params)}".rstrip())
    return f"7767517\n{len(lines)} {n_inputs + n_outputs}\n" + "\n".join(lines) + "\n"


def run_ncnn(param_text: str, weights: bytes, inputs: dict, outputs: list[str],
             num_threads: int = 2) -> dict[str, np.ndarray]:
    assert ncnn is not None, "pip install ncnn to use the oracle"
    with tempfile.TemporaryDirectory() as d:
        p, b = os.path.join(d, "m.param"), os.path.join(d, "m.bin")
        with open(p, "w") as f:
            f.write(param_text)
        with open(b, "wb") as f:
            f.write(weights)
        net = ncnn.Net()
        o = net.opt
        o.use_vulkan_compute = False
        o.use_fp16_packed = o.use_fp16_storage = o.use_fp16_arithmetic = False
        o.use_bf16_storage = False
        o.num_threads = num_threads
        assert net.load_param(p) == 0, "ncnn rejected the param"
        assert net.load_model(b) == 0, "ncnn rejected the model"
        ex = net.create_extractor()
        keep = []
        for name, arr in inputs.items():
            m = ncnn.Mat(np.ascontiguousarray(arr, np.float32)).clone()
            keep.append(m)
            ex.input(name, m)
        result = {}
        for name in outputs:
            ret, out = ex.extract(name)
            assert ret == 0, f"ncnn extract({name}) returned {ret}"
            result[name] = np.array(out, dtype=np.float32, copy=True)
        del ex
        net.clear()
        return result


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


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    """max |a-b| over max |b| (floored at 1): relative to the tensor's scale, absolute near 0."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    finite = np.isfinite(a) & np.isfinite(b)
    ok = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b)))
    if not np.all(finite | ok):
        return float("inf")
    diff = np.where(ok, 0.0, np.abs(a - b))
    scale = max(1.0, float(np.max(np.where(ok, 0.0, np.abs(b)))))
    return float(np.max(diff)) / scale


def check_layer(type_name: str, params: dict, weights, inputs: list[np.ndarray], n_outputs: int = 1,
                tol: float = 1e-4, gpu: bool = False, fp16: bool = False) -> float:
    """Run one layer in ncnn and vkncnn; assert every output agrees within tol; return max error."""
    text = layer_param_text(type_name, params, len(inputs), n_outputs)
    wb = bin_bytes(weights)
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    names = [f"out{i}" for i in range(n_outputs)]
    want = run_ncnn(text, wb, feed, names)
    got = run_vkncnn(text, wb, feed, names, gpu=gpu, fp16=fp16)
    worst = 0.0
    for name in names:
        assert got[name].shape == want[name].shape, (
            f"{type_name} {params}: {name} shape {got[name].shape} != ncnn {want[name].shape}")
        err = rel_err(got[name], want[name])
        assert err <= tol, f"{type_name} {params} inputs {[x.shape for x in inputs]}: {name} err {err:.3g} > {tol}"
        worst = max(worst, err)
    return worst


def rand(*shape, seed: int = 0, lo: float = -1.2, hi: float = 1.2) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)
