"""A batch on the GPU is one recorded plan whose items run side by side: each item in its
own lane of one command buffer, interleaved so that a barrier orders a step of every item
at once. Nets with a host step run the items one by one, with the same answers."""

import numpy as np
import pytest

import vkncnn
from tests.gpu.test_net_gpu import MIXED, _expect, _net
from vkncnn.gpu.vulkan import instance
from vkncnn.tools.benchmark_models import param_path
from vkncnn.tools.randweights import random_weights

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

CHAIN = """7767517
5 5
Input in 0 1 x
Convolution c1 1 1 x a 0=8 1=3 4=1 5=1 6=216 9=1
ConvolutionDepthWise d1 1 1 a b 0=8 1=3 4=1 5=1 6=72 7=8 9=2 -23310=1,0.1
Convolution c2 1 1 b c 0=8 1=1 5=1 6=64
Pooling p 1 1 c y 0=1 1=2 2=2
"""


def _chain_net(tmp_path):
    param = tmp_path / "chain.param"
    param.write_text(CHAIN)
    net = _net(CHAIN, weights=random_weights(str(param), seed=5, input_shapes=(3, 12, 10)),
               use_fp16_storage=False)
    return net


def _extract(net, x, batch_index=None):
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(x) if batch_index is None else vkncnn.Mat(x, batch_index=batch_index))
        out = ex.extract("y")[1]
        plans = list(ex._gpu.plans) if ex._gpu is not None else []
        return out, plans


def test_items_of_a_batch_share_each_barrier(tmp_path):
    """Four items: four times the dispatches of one, but no more barriers, and each item's
    answer is the one it gets alone."""
    net = _chain_net(tmp_path)
    rng = np.random.default_rng(0)
    batch = rng.uniform(-1, 1, (4, 3, 12, 10)).astype(np.float32)
    alone = [_extract(net, x) for x in batch]
    one_plan = alone[0][1][0]
    got, plans = _extract(net, batch, batch_index=0)
    assert got.n == 4 and len(plans) == 1
    plan = plans[0]
    assert len(plan.downloads) == 4
    assert plan.cmd.dispatch_count == 4 * one_plan.cmd.dispatch_count
    assert plan.cmd.barriers == one_plan.cmd.barriers
    for b in range(4):
        np.testing.assert_allclose(got.numpy(batch_index=0)[b], alone[b][0].numpy(), rtol=1e-5, atol=1e-6)


def test_a_batch_plan_replays_with_new_items(tmp_path):
    net = _chain_net(tmp_path)
    rng = np.random.default_rng(1)
    for _ in range(3):
        batch = rng.uniform(-1, 1, (3, 3, 12, 10)).astype(np.float32)
        got, _ = _extract(net, batch, batch_index=0)
        for b in range(3):
            np.testing.assert_allclose(got.numpy(batch_index=0)[b], _extract(net, batch[b])[0].numpy(),
                                       rtol=1e-5, atol=1e-6)
    batched = [k for k in net.gpu._idle if k[1] == 3]
    assert len(batched) == 1  # recorded once, replayed twice
    assert net.gpu.plans_replayed >= 2


def test_a_later_extract_reads_each_items_device_blobs(tmp_path):
    """Extracting an inner blob, then the output: the second plan starts from each item's
    blob left on the device by the first (one Pooling dispatch per item), not from the input."""
    net = _chain_net(tmp_path)
    x = np.random.default_rng(2).uniform(-1, 1, (3, 3, 12, 10)).astype(np.float32)
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(x, batch_index=0))
        inner = ex.extract("c")[1]
        y = ex.extract("y")[1]
        first, second = ex._gpu.plans
        assert second.cmd.dispatch_count == 3
    assert inner.n == y.n == 3
    for b in range(3):
        np.testing.assert_allclose(y.numpy(batch_index=0)[b], _extract(net, x[b])[0].numpy(), rtol=1e-5, atol=1e-6)


def test_a_net_with_a_host_step_runs_its_items_one_by_one():
    net = _net(MIXED)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3, 4, 5, 6)).astype(np.float32)
    for _ in range(2):
        got, _ = _extract(net, x, batch_index=0)
        assert got.n == 3
        np.testing.assert_allclose(got.numpy(batch_index=0), _expect(x), rtol=1e-2, atol=1e-3)
    assert net.gpu.batch_lanes is False  # found once; later batches go item by item at once


def test_a_benchmark_model_batch_is_one_plan():
    weights = random_weights(str(param_path("squeezenet")), seed=0)
    net = vkncnn.Net()
    net.opt.use_fp16_storage = False
    net.load_param(str(param_path("squeezenet")))
    net.load_model(weights)
    rng = np.random.default_rng(4)
    batch = rng.uniform(-1, 1, (2, 3, 227, 227)).astype(np.float32)
    with net.create_extractor() as ex:
        ex.input("data", vkncnn.Mat(batch, batch_index=0))
        got = ex.extract("output")[1]
        assert len(ex._gpu.plans) == 1 and ex._items is None
    for b in range(2):
        with net.create_extractor() as ex:
            ex.input("data", vkncnn.Mat(batch[b]))
            np.testing.assert_allclose(got.numpy(batch_index=0)[b], ex.extract("output")[1].numpy(),
                                       rtol=1e-4, atol=1e-6)
