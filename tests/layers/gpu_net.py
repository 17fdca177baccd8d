"""A layer without a shader inside a GPU net: a GPU BinaryOp before and after it, so its
input is downloaded from and its output uploaded to the device, checked against real ncnn."""

from __future__ import annotations

import numpy as np

from tests.oracle import (
    bin_bytes,
    needs_gpu,  # noqa: F401  (re-exported: test modules import it from here)
    param_entries,
    rel_err,
    run_ncnn,
    run_vkncnn,
)


def check_in_gpu_net(type_name: str, params: dict, weights, inputs: list[np.ndarray], tol: float = 1e-4) -> float:
    n = len(inputs)
    lines = [f"Input in{i} 0 1 in{i}" for i in range(n)]
    lines.append("BinaryOp pre 1 1 in0 a0 0=0 1=1 2=0.25")          # x + 0.25 on the GPU
    bottoms = " ".join(["a0"] + [f"in{i}" for i in range(1, n)])
    lines.append(f"{type_name} op {n} 1 {bottoms} b0 {param_entries(params)}".rstrip())
    lines.append("BinaryOp post 1 1 b0 out0 0=2 1=1 2=1.5")         # y * 1.5 on the GPU
    text = f"7767517\n{len(lines)} {n + 3}\n" + "\n".join(lines) + "\n"
    wb = bin_bytes(weights)
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    want = run_ncnn(text, wb, feed, ["out0"])["out0"]
    got = run_vkncnn(text, wb, feed, ["out0"], gpu=True)["out0"]
    assert got.shape == want.shape, f"{type_name} in a GPU net: shape {got.shape} != ncnn {want.shape}"
    err = rel_err(got, want)
    assert err <= tol, f"{type_name} {params} in a GPU net: err {err:.3g} > {tol}"
    return err
