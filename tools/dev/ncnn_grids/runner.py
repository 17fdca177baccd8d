"""Run grid cases through real ncnn and vkncnn and sort each into an outcome."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vkncnn.errors import Error as VkncnnError
from vkncnn.testing import layer_param_text, param_entries, random_net_weights, rel_err, weights_bin
from vkncnn.tools.dev.layerfuzz.runner import run_vkncnn
from vkncnn.tools.dev.ncnn_worker import NcnnCrashed, NcnnWorker

from .registry import GridCase, case_rng, grid_cases

AGREE, BOTH_REFUSE, NCNN_REFUSES, NCNN_CRASHED = "agree", "both refuse", "ncnn refuses", "ncnn crashed"
VK_REFUSES, MISMATCH = "vkncnn refuses", "mismatch"
FAILURES = (VK_REFUSES, MISMATCH)
STATUSES = (AGREE, BOTH_REFUSE, NCNN_REFUSES, NCNN_CRASHED, VK_REFUSES, MISMATCH)


@dataclass
class LayerTally:
    type_name: str
    counts: dict = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    failures: list = field(default_factory=list)  # (index, description, detail)

    @property
    def cases(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return sum(self.counts[s] for s in FAILURES)


def case_inputs(type_name: str, index: int, case: GridCase) -> list:
    rng = case_rng(type_name, index)
    out = []
    for x in case.inputs:
        if isinstance(x, np.ndarray):
            out.append(x)
        else:
            out.append(rng.uniform(-1, 1, size=tuple(x)).astype(np.float32))
    return out


def describe(type_name: str, case: GridCase, inputs: list) -> str:
    return f"{type_name} {param_entries(case.params)} inputs={[tuple(x.shape) for x in inputs]}"


def run_one(type_name: str, index: int, case: GridCase, worker: NcnnWorker, path: str = "cpu") -> tuple:
    """(status, detail) of one case."""
    inputs = case_inputs(type_name, index, case)
    text = layer_param_text(type_name, case.params, len(inputs), case.n_outputs)
    names = [f"out{i}" for i in range(case.n_outputs)]
    feed = {f"in{i}": np.ascontiguousarray(x) if x.dtype == np.int32 else np.ascontiguousarray(x, np.float32)
            for i, x in enumerate(inputs)}
    vk_err = None
    try:
        wb = random_net_weights(text, seed=index) if case.weights is None else weights_bin(case.weights)
    except VkncnnError as e:  # vkncnn refused the params already; ncnn still gets its say
        wb, vk_err = b"", f"{type(e).__name__}: {e}"
    try:
        kind, want = worker.run(text, wb, {k: x.view(np.float32) for k, x in feed.items()}, names,
                                empty_dims=True)
    except NcnnCrashed as e:
        kind, want = "crashed", str(e)
    if vk_err is None:
        try:
            got = run_vkncnn(text, wb, feed, names, path)
        except VkncnnError as e:
            vk_err = f"{type(e).__name__}: {e}"
        except Exception as e:  # a foreign exception is a defect whatever ncnn did
            return VK_REFUSES, f"{type(e).__name__} (not a vkncnn.Error): {e}"
    if kind == "crashed":
        return NCNN_CRASHED, want
    if kind == "error":
        return (BOTH_REFUSE if vk_err else NCNN_REFUSES), want
    if vk_err:
        return VK_REFUSES, vk_err
    for name in names:
        if want[name].shape == (0,) and got[name].size == 0:
            continue  # ncnn answers an empty Mat (dims 0, no axes to compare): so does vkncnn
        if got[name].shape != want[name].shape:
            return MISMATCH, f"{name} shape {got[name].shape} != ncnn {want[name].shape}"
        err = rel_err(got[name], want[name])
        if err > case.tol and _strays(got[name], want[name], case.tol) > case.stray:
            return MISMATCH, f"{name} err {err:.3g} > {case.tol}"
    return AGREE, ""


def _strays(got: np.ndarray, want: np.ndarray, tol: float) -> int:
    """How many elements differ beyond tol (on the scale rel_err uses)."""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    with np.errstate(invalid="ignore"):
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(w), w, 0)), initial=0)))
        same = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= tol * scale)
    return int(np.count_nonzero(~same))


def sampled(cases: list, keep_every: int) -> list:
    """(index, case) pairs: every keep_every-th case, plus every edge case."""
    return [(i, c) for i, c in enumerate(cases) if i % keep_every == 0 or c.edge]


def run_layer(type_name: str, worker: NcnnWorker, path: str = "cpu", keep_every: int = 1) -> LayerTally:
    tally = LayerTally(type_name)
    cases = grid_cases(type_name)
    for index, case in sampled(cases, keep_every):
        status, detail = run_one(type_name, index, case, worker, path)
        tally.counts[status] += 1
        if status in FAILURES:
            tally.failures.append((index, describe(type_name, case, case_inputs(type_name, index, case)),
                                   f"{status}: {detail}"))
    return tally
