"""Hostile models: the quick fuzz profiles, and the fuzz harness's own checks.

Load time: a few thousand mutated real files, in this process. Extract time: a few
hundred mutated models run to their outputs in worker processes. The long profile
(100,000+ cases) is `python -m vkncnn.tools.dev.fuzz --cases 100000`.
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vkncnn.errors import LayerError, MemoryBudgetError, ShapeError
from vkncnn.tools.dev import fuzz, fuzz_cases, fuzz_model, fuzz_worker
from vkncnn.tools.dev.fuzz_cases import Case
from vkncnn.tools.dev.fuzz_pool import Limits

CORPUS = fuzz.seed_corpus()


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_mutated_model_files_load_or_raise_vkncnn_errors(seed):
    rng = random.Random(seed)
    kind, param, weights = CORPUS[rng.randrange(len(CORPUS))]
    p, w = fuzz.mutate(kind, param, weights, rng)
    outcome = fuzz.run_case(kind, p, w, time_limit=1.0)
    assert not outcome.startswith("FAIL"), outcome


def test_loading_never_touches_the_users_files(tmp_path):
    src = fuzz.BENCHMARK_DIR / "squeezenet.param"
    copy = tmp_path / "m.param"
    copy.write_bytes(src.read_bytes())
    before = (copy.stat().st_mtime_ns, copy.read_bytes())
    fuzz.load_case("text", copy.read_bytes(), b"")
    import vkncnn
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param(str(copy))
    assert (copy.stat().st_mtime_ns, copy.read_bytes()) == before


# -- extract time ------------------------------------------------------------------------------
def test_mutated_models_run_or_raise_vkncnn_errors():
    report = fuzz.fuzz(fuzz.cases_for(seed=1, count=300), Limits(cpu_s=2.0, wall_s=30.0), workers=2)
    assert sum(report.counts.values()) == 300
    assert report.counts["ok"] > 50  # the edits leave many models runnable: outputs get computed
    assert report.failed == 0, "\n".join(fuzz.failure_text(r, 1, None) for r in report.failures)


def test_the_harness_catches_each_kind_of_failure():
    """A foreign exception, a CPU hang, a sleeping hang, a crash and a blow-up each come back
    as their failure, and the pool still runs a real case after them."""
    limits = Limits(cpu_s=0.5, wall_s=1.5, budget=16 << 20, margin=16 << 20)
    cases = [Case(i, mode) for i, mode in enumerate(fuzz_cases.HARNESS_CHECKS)]
    cases.append(fuzz_cases.draw(1, 0, budget=limits.budget))
    report = fuzz.fuzz(cases, limits, workers=2)
    got = {r.case.mode: r.outcome for r in report.failures}
    assert got == {"raise": "FOREIGN", "spin": "HANG", "sleep": "HANG", "abort": "CRASH", "hog": "BLOWUP"}
    assert report.failed == 5 and sum(report.counts.values()) == 6
    crash = next(r for r in report.failures if r.outcome == "CRASH")
    assert "SIGABRT" in crash.detail
    spin = next(r for r in report.failures if r.outcome == "HANG" and r.case.mode == "spin")
    assert spin.detail.startswith("past the limit in both of two runs")


def test_a_case_slow_only_on_its_first_run_passes(tmp_path):
    """A case past its CPU limit once (shaders compiled into empty caches) runs again and passes
    there; one past it every time stays a HANG (above)."""
    limits = Limits(cpu_s=0.5, wall_s=5.0, budget=16 << 20, margin=16 << 20)
    marker = tmp_path / "first-run"
    report = fuzz.fuzz([Case(0, "cold", param=str(marker).encode())], limits, workers=1)
    assert marker.exists(), "the first run did not happen"
    assert report.failed == 0 and report.counts["ok"] == 1


def test_a_foreign_exception_wrapped_by_a_layer_is_a_failure(monkeypatch):
    def wrapped(case, budget):
        try:
            {}["missing"]
        except KeyError as e:
            raise LayerError("layer 'x' (X) failed: KeyError") from e

    monkeypatch.setattr(fuzz_worker, "run_extract", wrapped)
    outcome, detail = fuzz_worker.execute(Case(0), 1 << 20)
    assert outcome == "FOREIGN" and "KeyError" in detail

    def refused(case, budget):
        raise ShapeError("a model error, reported as one")

    monkeypatch.setattr(fuzz_worker, "run_extract", refused)
    assert fuzz_worker.execute(Case(0), 1 << 20)[0] == "ShapeError"

    def unbudgeted(case, budget):
        try:
            raise MemoryError("the machine refused")
        except MemoryError as e:
            raise MemoryBudgetError("layer 'x': the machine could not give a buffer") from e

    monkeypatch.setattr(fuzz_worker, "run_extract", unbudgeted)
    assert fuzz_worker.execute(Case(0), 1 << 20)[0] == "BLOWUP"


def test_a_case_is_the_same_wherever_it_is_drawn():
    for i in range(40):
        assert fuzz_cases.draw(3, i) == fuzz_cases.draw(3, i)
    kinds = {fuzz_cases.draw(3, i).fmt for i in range(200)}
    assert kinds == {"text", "binary"}


def test_a_saved_case_replays_as_it_was(tmp_path):
    case = next(c for c in (fuzz_cases.draw(5, i) for i in range(100)) if c.fmt == "binary")
    where = fuzz.save_case(fuzz.Result(case, "FOREIGN", "detail"), tmp_path, seed=5)
    assert fuzz.load_saved(where) == case
    assert fuzz.replay(case, 64 << 20, show=False) == 0


def test_the_binary_writer_matches_the_text():
    import vkncnn

    text = (fuzz.BENCHMARK_DIR / "squeezenet.param").read_text()
    data, index = fuzz_model.TextModel.parse(text).binary()
    outputs = {}
    for load, arg, name in (("load_param", text.encode(), "output"), ("load_param_bin", data, str(index["output"]))):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = False
        getattr(net, load)(arg)
        net.load_model(vkncnn.DataReaderFromEmpty())
        x = np.ones((3, 32, 32), np.float32)
        first = net.input_names()[0]
        outputs[load] = net.run({first: x}, [name])[name]
    np.testing.assert_array_equal(outputs["load_param"], outputs["load_param_bin"])


@pytest.mark.parametrize("expr", ["lshift(1,2147483647)", "square(square(square(square(99999))))",
                                  "rshift(lshift(1,40),3)", "*(2147483647,2147483647)", "ceil(1e30)"])
def test_hostile_shape_expressions_stay_32_bit(expr):
    from vkncnn.cpu_fallback.shape import eval_list_expression

    (v,) = eval_list_expression(expr, [np.zeros((2, 3, 4), np.float32)])
    assert -(2**31) <= v < 2**31
