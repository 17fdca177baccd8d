"""A layer's GPU path against real ncnn, with its numpy forward refused.

Each case runs ncnn once (fp32) and vkncnn on the GPU in four variants: fp32 and fp16
storage, each with pack1 and pack4 layouts. The layer's forward_cpu is patched to raise
meanwhile, so a silent fallback to numpy (support_vulkan off, or a download in the plan)
fails instead of passing for a shader. fp16 storage rounds inputs, weights and every
stored value to half precision: checked within vkncnn.testing.FP16_TOLERANCE.
"""

from __future__ import annotations

import numpy as np

from tests.oracle import (
    bin_bytes,
    layer_param_text,
    needs_gpu,  # noqa: F401  (re-exported: test modules import it from here)
    param_entries,
    rel_err,
    run_ncnn,
    run_vkncnn,
)
from vkncnn.testing import FP16_TOLERANCE, FP32_TOLERANCE

VARIANTS = [(False, False), (False, True), (True, False), (True, True)]  # (fp16, packing)


def refuse_numpy(monkeypatch, layer_class) -> None:
    def refuse(self, bottoms, opt):
        raise AssertionError(f"{self.type}: the numpy forward ran inside a GPU net")
    monkeypatch.setattr(layer_class, "forward_cpu", refuse)


def check_gpu_vs_ncnn(monkeypatch, layer_class, type_name: str, params: dict, weights,
                      inputs: list[np.ndarray], in_net: bool = False) -> None:
    """`in_net`: wrap the layer between two GPU BinaryOps (x + 0.25 before, y * 1.5 after),
    so its input arrives as a GPU blob in the plan's own packing, not as an upload."""
    text = _net_text(type_name, params, len(inputs)) if in_net else layer_param_text(type_name, params, len(inputs))
    wb = bin_bytes(weights)
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    want = run_ncnn(text, wb, feed, ["out0"])["out0"]
    refuse_numpy(monkeypatch, layer_class)
    for fp16, packing in VARIANTS:
        got = run_vkncnn(text, wb, feed, ["out0"], gpu=True, fp16=fp16, packing=packing)["out0"]
        what = f"{type_name} {params} {[x.shape for x in inputs]} fp16={fp16} packing={packing}"
        assert got.shape == want.shape, f"{what}: shape {got.shape} != ncnn {want.shape}"
        err = rel_err(got, want)
        tol = FP16_TOLERANCE if fp16 else FP32_TOLERANCE
        assert err <= tol, f"{what}: err {err:.3g} > {tol}"


def _net_text(type_name: str, params: dict, n: int) -> str:
    lines = [f"Input in{i} 0 1 in{i}" for i in range(n)]
    lines.append("BinaryOp pre 1 1 in0 a0 0=0 1=1 2=0.25")
    bottoms = " ".join(["a0"] + [f"in{i}" for i in range(1, n)])
    lines.append(f"{type_name} op {n} 1 {bottoms} b0 {param_entries(params)}".rstrip())
    lines.append("BinaryOp post 1 1 b0 out0 0=2 1=1 2=1.5")
    return f"7767517\n{len(lines)} {n + 3}\n" + "\n".join(lines) + "\n"
