"""Extractor and GPU-state lifetimes that need no help from the user.

pyncnn scripts make an extractor per inference and never clear it. These tests drop
extractors in every way (rebinding, reference cycles, garbage collection at random
points, many threads, while a lock is held), fork after GPU use, and let a fence wait
time out: each must leave the net working, its plans replayed and its memory flat.
"""

import gc
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn.gpu.vulkan.lifetime import pending_releases, run_deferred
from vkncnn.tools.benchmark_models import DATA, param_path
from vkncnn.tools.randweights import random_weights

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def _digits(gpu: bool = True) -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param(str(DATA / "digits.param"))
    net.load_model(str(DATA / "digits.bin"))
    if gpu and net.gpu is None:
        pytest.skip("no Vulkan device")
    return net


def _image(k: int = 0) -> np.ndarray:
    return np.load(DATA / "digits_test.npz")["images"][k][None].astype(np.float32)


def _infer(net, x):
    ex = net.create_extractor()  # the pyncnn pattern: no clear(), no `with`
    ex.input("in0", vkncnn.Mat(x))
    return ex.extract("out0")[1].numpy()


def test_extractor_dropped_to_the_collector_hands_its_plan_back():
    net = _digits()
    x = _image()
    first = _infer(net, x)
    gc.collect()
    second = _infer(net, x)
    np.testing.assert_array_equal(first, second)
    assert (net.gpu.plans_recorded, net.gpu.plans_replayed) == (1, 1)


def test_extractor_in_a_reference_cycle_hands_its_plan_back_once():
    net = _digits()
    x = _image()
    expected = _infer(net, x)
    held = net.gpu.bytes_held()
    for _ in range(5):
        ex = net.create_extractor()
        ex.myself = ex  # only the cyclic collector can free it, finalizers in any order
        ex.input("in0", vkncnn.Mat(x))
        np.testing.assert_array_equal(ex.extract("out0")[1].numpy(), expected)
        del ex
        gc.collect()
    run_deferred()
    assert pending_releases() == 0
    assert net.gpu.plans_recorded == 1 and net.gpu.plans_replayed == 5
    assert net.gpu.bytes_held() == held


def test_finalizer_takes_no_lock_a_thread_may_hold():
    """The collector may run an extractor's finalizer in a thread that holds the plan
    cache's lock: handing the plans back must not wait for that lock."""
    net = _digits()
    x = _image()
    _infer(net, x)
    ex = net.create_extractor()
    ex.input("in0", vkncnn.Mat(x))
    ex.extract("out0")  # holds the cached plan now
    extractors = [ex]
    del ex
    done = threading.Event()

    def drop_while_locked():
        with net.gpu._plans_lock:
            extractors.pop()  # the last reference: its finalizer runs here, inside the lock
        done.set()

    holder = threading.Thread(target=drop_while_locked, daemon=True)
    holder.start()
    holder.join(timeout=30)
    assert done.is_set(), "dropping an extractor deadlocked on the plan cache's lock"
    assert pending_releases() == 1
    _infer(net, x)  # the next public call runs the queued release: the plan is replayed, not recorded
    assert (net.gpu.plans_recorded, net.gpu.plans_replayed) == (1, 2)


def _stress(runs: int) -> None:
    env = dict(os.environ, VKNCNN_VALIDATION="1")
    for seed in range(runs):
        proc = subprocess.run([sys.executable, "-m", "tests.gpu.extractor_stress", "--seed", str(seed)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"run {seed} died ({proc.returncode}): {proc.stderr[-2000:]}"
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["problem_count"] == 0, report["problems"]
        # each thread needs a plan of its own at most; everything else is a replay
        assert report["recorded"] <= 8, report
        assert report["replayed"] >= report["extracts"], report
        assert report["held_after"] == report["held_before"], report
        assert report["rss_growth_kib"] < 32 * 1024, report
        assert report["device_bytes_left"] == 0, report
        assert report["validation"] == [], report


def test_eight_threads_drop_extractors_under_random_collections():
    _stress(runs=3)


@pytest.mark.slow
def test_eight_threads_drop_extractors_twenty_runs():
    _stress(runs=20)


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu"])
def test_input_after_extract_keeps_what_was_computed(gpu):
    """As ncnn: an extractor computes a blob once; a later input() does not redo it."""
    net = _digits(gpu)
    x1, x2 = _image(0), _image(1)
    fresh = _infer(net, x2)
    ex = net.create_extractor()
    ex.input("in0", vkncnn.Mat(x1))
    y1 = ex.extract("out0")[1].numpy()
    ex.input("in0", vkncnn.Mat(x2))
    np.testing.assert_array_equal(ex.extract("out0")[1].numpy(), y1)
    assert not np.allclose(y1, fresh)
    ex.clear()  # cleared: the new input counts
    ex.input("in0", vkncnn.Mat(x2))
    np.testing.assert_array_equal(ex.extract("out0")[1].numpy(), fresh)


def test_input_after_extract_feeds_blobs_not_computed_yet():
    """Blobs not computed before the new input are computed from it, on both paths."""
    param = "7767517\n3 3\nInput in0 0 1 x\nReLU r 1 1 x a\nAbsVal b 1 1 x c\n"
    results = []
    for gpu in (False, True):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.load_param_mem(param)
        if gpu and net.gpu is None:
            pytest.skip("no Vulkan device")
        ex = net.create_extractor()
        ex.input("x", vkncnn.Mat(np.full((4, 4, 4), -1.0, np.float32)))
        a = ex.extract("a")[1].numpy()
        ex.input("x", vkncnn.Mat(np.full((4, 4, 4), -2.0, np.float32)))
        c = ex.extract("c")[1].numpy()
        results.append((a, c))
    for a, c in results:
        np.testing.assert_array_equal(a, 0.0)
        np.testing.assert_array_equal(c, 2.0)


def _in_forked_child(fn) -> dict:
    """Run fn() in a fork()ed child; its JSON-able result, or why it failed or hung."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's atexit hooks
        try:
            result = fn()
        except BaseException as e:
            result = {"raised": type(e).__name__, "message": str(e)}
        os.write(write_end, json.dumps(result).encode())
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(read_end)
        return {"hung": True}
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    return json.loads(data) if data else {"exit_status": status}


def test_forked_child_gets_an_error_not_a_hang():
    net = _digits()
    x = _image()
    _infer(net, x)

    def use_inherited_net():
        return {"out": _infer(net, x).tolist()}

    result = _in_forked_child(use_inherited_net)
    assert result.get("raised") == "GpuError", result
    assert "fork" in result["message"]
    _infer(net, x)  # the parent's net is untouched


def test_forked_child_runs_a_new_net_on_the_cpu_path():
    net = _digits()
    x = _image()
    expected = _infer(_digits(gpu=False), x)
    _infer(net, x)

    def new_net():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            child_net = vkncnn.Net()
            child_net.load_param(str(DATA / "digits.param"))
            child_net.load_model(str(DATA / "digits.bin"))
            out = _infer(child_net, x)
        return {"on_gpu": child_net.gpu is not None, "out": out.tolist(),
                "warnings": [str(w.message) for w in caught]}

    result = _in_forked_child(new_net)
    assert result.get("on_gpu") is False, result
    assert any("fork" in w for w in result["warnings"]), result
    np.testing.assert_allclose(np.array(result["out"], np.float32), expected, rtol=1e-5, atol=1e-5)


def test_fence_wait_timeout_is_a_gpu_error_naming_the_wait(monkeypatch):
    param = str(param_path("squeezenet"))
    net = vkncnn.Net()
    net.load_param(param)
    net.load_model(random_weights(param, seed=0))
    if net.gpu is None:
        pytest.skip("no Vulkan device")
    x = np.random.default_rng(0).uniform(-1, 1, (3, 227, 227)).astype(np.float32)
    monkeypatch.setenv("VKNCNN_FENCE_TIMEOUT_S", "1e-9")
    with pytest.raises(vkncnn.GpuError, match="did not finish"), net.create_extractor() as ex:
        ex.input("data", vkncnn.Mat(x))
        ex.extract("output")
    monkeypatch.delenv("VKNCNN_FENCE_TIMEOUT_S")
    out = net.run({"data": x}, ["output"])["output"]
    cpu = vkncnn.Net()
    cpu.opt.use_vulkan_compute = False
    cpu.load_param(param)
    cpu.load_model(random_weights(param, seed=0))
    np.testing.assert_allclose(out, cpu.run({"data": x}, ["output"])["output"], rtol=2e-2, atol=2e-3)
