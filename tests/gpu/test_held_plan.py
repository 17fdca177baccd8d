"""A plan held by its owner across runs (vkncnn/gpu/held_plan.py): replays, and records afresh
whenever what it was recorded for changed."""

import gc

import numpy as np
import pytest

import vkncnn
from vkncnn.errors import GpuError
from vkncnn.extractor import run_deferred_releases
from vkncnn.gpu.held_plan import HeldPlan
from vkncnn.gpu.vulkan import instance

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

PRODUCT = """7767517
3 3
Input in0 0 1 x
InnerProduct ip 1 1 x p 0=4 1=0 2=32
ReLU relu 1 1 p y
"""


def _weights(value):
    return np.zeros(1, np.int32).tobytes() + np.full(32, value, np.float32).tobytes()  # fp32 flag, then W


def _net(value=1.0):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = True
    net.load_param_mem(PRODUCT)
    net.load_model(_weights(value))
    return net


def _run(held, net, x, key=None):
    return np.array(held.run(key, {net.find_blob_index_by_name("x"): x}, {}))


def test_runs_replay_one_plan_with_each_run_inputs():
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    for v in (1.0, -1.0, 2.0, 0.5):
        assert _run(held, net, np.full(8, v, np.float32)).tolist() == [max(8 * v, 0)] * 4
    assert (net.gpu.plans_recorded, net.gpu.plans_replayed) == (1, 3)


def test_records_again_for_a_new_shape_key_weights_or_profile():
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    _run(held, net, np.ones(8, np.float32))
    assert _run(held, net, np.ones((1, 8), np.float32)).tolist() == [[8.0] * 4]  # another shape
    _run(held, net, np.ones(8, np.float32), key="other buffers")
    assert net.gpu.plans_recorded == 3
    net.load_model(_weights(2.0))
    assert _run(held, net, np.ones(8, np.float32), key="other buffers").tolist() == [16.0] * 4
    net.gpu.profile = "dispatches"
    _run(held, net, np.ones(8, np.float32), key="other buffers")
    assert any("InnerProduct" in label for label in net.gpu.layer_times)
    assert net.gpu.plans_recorded == 5


def test_a_released_net_is_a_clear_error():
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    _run(held, net, np.ones(8, np.float32))
    net.clear()
    with pytest.raises(GpuError, match="no longer runs on the GPU path"):
        _run(held, net, np.ones(8, np.float32))


def test_a_dropped_held_plan_gives_its_plan_back_uncached():
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    _run(held, net, np.ones(8, np.float32))
    assert len(net.gpu._lent) == 1
    del held
    gc.collect()
    run_deferred_releases()
    assert not net.gpu._lent and net.gpu._idle_count == 0  # its plans bind their owner's buffers


def test_the_inputs_given_are_not_modified():
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    before = x.copy()
    for _ in range(2):
        _run(held, net, x)
    np.testing.assert_array_equal(x, before)


def test_each_run_returns_an_array_of_its_own():
    """A replay downloads into a new array, so what an earlier run returned keeps its values
    (the Decoder hands these arrays to the caller without copying them)."""
    net = _net()
    held = HeldPlan(net, net.find_blob_index_by_name("y"))
    first = held.run(None, {net.find_blob_index_by_name("x"): np.ones(8, np.float32)}, {})
    second = held.run(None, {net.find_blob_index_by_name("x"): np.full(8, 2.0, np.float32)}, {})
    assert net.gpu.plans_replayed == 1
    assert first.tolist() == [8.0] * 4 and second.tolist() == [16.0] * 4
    assert held.output() is second


def test_a_plan_dropped_as_the_interpreter_exits_says_nothing(monkeypatch):
    """At interpreter exit a module's globals may be cleared before its objects go: a held
    plan collected then has no queue to defer its release to, and must not raise."""
    from types import SimpleNamespace

    from vkncnn.gpu import held_plan

    plan = HeldPlan.__new__(HeldPlan)
    released = []
    plan._state = SimpleNamespace(release=lambda: released.append(True))
    monkeypatch.setattr(held_plan, "defer_gpu_release", None)
    plan.__del__()
    monkeypatch.undo()
    plan.__del__()  # with the module whole, the release is deferred as usual
    run_deferred_releases()
    assert released == [True]
    plan._state = None
