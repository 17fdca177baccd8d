"""Dropped plans' device buffers serve a net's next plans (BufferPool): a net whose shapes
change at every inference stops allocating device memory for each, its results unchanged,
and nothing is left behind when the net goes."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import vkncnn
from tests.oracle import needs_gpu
from vkncnn.gpu import planner
from vkncnn.gpu.vulkan.allocator import live_device_bytes
from vkncnn.gpu.vulkan.buffer_pool import BufferPool
from vkncnn.testing import random_net_weights


class _Raw:
    def __init__(self, size_class: int) -> None:
        self.size = self.size_class = size_class
        self.destroyed = False

    def destroy(self) -> None:
        self.destroyed = True


class _Device:
    destroyed = False
    refs = 0

    def register_allocator(self, allocator) -> None:
        self.registered = allocator

    def retain(self) -> None:
        self.refs += 1

    def release_ref(self) -> None:
        self.refs -= 1


def test_pool_hands_out_a_class_or_one_up_to_twice_it_and_frees_past_its_cap():
    device = _Device()
    pool = BufferPool(device, max_bytes=3000)
    assert device.registered is pool  # device teardown frees what it holds
    small, big, huge = _Raw(1024), _Raw(1536), _Raw(4096)
    for raw in (small, big, huge):
        pool.put(raw)
    assert huge.destroyed and pool.bytes_held == 2560  # 4096 would pass the cap
    assert device.refs == 2  # each pooled buffer keeps the device alive
    assert pool.take(1280) is big      # none of 1280: the smallest class up to twice it
    assert pool.take(400) is None      # 1024 is more than twice 400
    assert pool.take(768) is small
    assert pool.take(768) is None and pool.bytes_held == 0 and pool.taken == 2
    device.refs -= 2  # the takers drop the references that came with the buffers
    pool.put(small)
    pool.clear()
    assert small.destroyed and pool.bytes_held == 0 and device.refs == 0


PARAM = """7767517
4 4
Input in 0 1 x
Convolution conv 1 1 x a 0=8 1=3 4=1 5=1 6=216
ReLU relu 1 1 a b
Pooling pool 1 1 b y 0=1 1=2 2=2
"""


@pytest.mark.gpu
@needs_gpu
def test_changing_shapes_reuse_dropped_plans_buffers():
    weights = random_net_weights(PARAM, seed=2)
    nets = {}
    for gpu in (False, True):
        nets[gpu] = vkncnn.Net()
        nets[gpu].opt.use_vulkan_compute = gpu
        nets[gpu].opt.use_fp16_storage = False  # fp32 throughout: a stale buffer would show
        nets[gpu].load_param_mem(PARAM)
        nets[gpu].load_model(weights)
    gc.collect()
    sizes = [(10 + i, 12 + 2 * i) for i in range(planner.MAX_PLANS_PER_NET + 6)]  # more shapes than plans kept
    rng = np.random.default_rng(0)
    for h, w in sizes + sizes:
        x = rng.uniform(-1, 1, (3, h, w)).astype(np.float32)
        np.testing.assert_allclose(nets[True].run({"x": x})["y"], nets[False].run({"x": x})["y"], rtol=1e-4, atol=1e-4)
    pool = nets[True].gpu.buffer_pool
    assert pool.taken > 0  # dropped plans' buffers went to later plans
    assert nets[True].gpu.bytes_held() >= pool.bytes_held > 0
    base = live_device_bytes()
    del nets
    gc.collect()
    assert live_device_bytes() < base  # the pool went with the net
