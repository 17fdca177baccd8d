"""No leaks: 1,000 extracts on each path keep host RSS and device memory flat after warm-up;
creating and dropping 100 nets returns all device memory."""

import gc

import numpy as np
import pytest

import vkncnn
from vkncnn.tools.benchmark_models import DATA

# a small net: the point is the bookkeeping of an extract (its plan, pools, staging), not the
# arithmetic; on lavapipe squeezenet's 26 dispatches took 50 ms an extract, 55 s a run
MODEL = DATA / "digits.param"


def _rss_kib() -> int:
    """Current resident set (not the peak), from /proc."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource
    return pages * resource.getpagesize() // 1024


def _net(gpu: bool):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param(str(MODEL))
    net.load_model(str(MODEL.with_suffix(".bin")))
    return net


def _extract_many(net, n: int) -> None:
    x = np.load(DATA / "digits_test.npz")["images"][0][None].astype(np.float32)
    for _ in range(n):
        with net.create_extractor() as ex:
            ex.input("in0", vkncnn.Mat(x))
            ex.extract("out0")


@pytest.mark.parametrize("gpu", [False, pytest.param(True, marks=pytest.mark.gpu)], ids=["cpu", "gpu"])
def test_1000_extracts_keep_memory_flat(gpu):
    net = _net(gpu)
    if gpu and net.gpu is None:
        pytest.skip("no Vulkan device")
    _extract_many(net, 50)  # warm-up: plans, pools, caches
    gc.collect()
    rss0 = _rss_kib()
    held0 = net.gpu.bytes_held() if gpu else 0
    _extract_many(net, 1000)
    gc.collect()
    growth = _rss_kib() - rss0
    assert growth < 16 * 1024, f"host RSS grew by {growth} KiB over 1000 extracts"
    if gpu:
        assert net.gpu.bytes_held() == held0
        assert net.gpu.plans_recorded == 1  # one plan, replayed ever since


@pytest.mark.gpu
def test_100_nets_return_all_device_memory():
    from vkncnn.gpu.vulkan import instance
    from vkncnn.gpu.vulkan.allocator import live_device_bytes

    if instance.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    x = np.load(DATA / "digits_test.npz")["images"][0][None].astype(np.float32)

    def one_net():
        net = vkncnn.Net()
        net.load_param(str(DATA / "digits.param"))
        net.load_model(str(DATA / "digits.bin"))
        net.run({"in0": x})
        return net

    del_net = one_net()
    del del_net
    gc.collect()
    base = live_device_bytes()
    for _ in range(100):
        net = one_net()
        assert live_device_bytes() > base  # it really held device memory
        del net
    gc.collect()
    assert live_device_bytes() <= base
