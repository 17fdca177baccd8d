"""A Net on the GPU: one recorded plan per input shape, replayed; CPU fallback inside
the graph; faults; threads; no leaks."""

import gc
import resource
import threading
import warnings

import numpy as np
import pytest

import vkncnn
from vkncnn.gpu.vulkan import instance
from vkncnn.tools.benchmark_models import param_path
from vkncnn.tools.randweights import random_weights

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]


class TimesTwo(vkncnn.Layer):
    """A custom Python layer: CPU only, so a GPU net must download, run it, upload."""

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt):
        top.clone_from(vkncnn.Mat(bottom.numpy() * 2))
        return 0


MIXED = """7767517
4 4
Input in 0 1 x
ReLU r1 1 1 x a 0=0.5
TimesTwo t 1 1 a b
ReLU r2 1 1 b y
"""


def _net(text=MIXED, gpu=True, weights=b"", **opt):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    for k, v in opt.items():
        setattr(net.opt, k, v)
    net.register_custom_layer("TimesTwo", TimesTwo)
    net.load_param_mem(text)
    net.load_model(weights)
    return net


def _expect(x):
    a = np.where(x < 0, 0.5 * x, x)
    return np.maximum(2 * a, 0)


def test_custom_cpu_layer_inside_gpu_graph_and_replay():
    net = _net()
    assert net.gpu is not None
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.uniform(-1, 1, (4, 5, 6)).astype(np.float32)
        with net.create_extractor() as ex:
            ex.input("x", vkncnn.Mat(x))
            y = ex.extract("y")[1].numpy()
        np.testing.assert_allclose(y, _expect(x), rtol=1e-2, atol=1e-3)
    assert net.gpu.plans_recorded == 1 and net.gpu.plans_replayed == 3


def test_new_shape_records_a_new_plan():
    net = _net()
    for shape in [(4, 5, 6), (3, 7, 2), (4, 5, 6)]:
        x = np.ones(shape, np.float32)
        assert net.run({"x": x})["y"].shape == shape
    assert net.gpu.plans_recorded == 2 and net.gpu.plans_replayed == 1


PRODUCT = """7767517
2 2
Input in0 0 1 x
InnerProduct ip 1 1 x y 0=4 1=0 2=32
"""


def _product_weights(value):
    return np.zeros(1, np.int32).tobytes() + np.full(32, value, np.float32).tobytes()  # fp32 flag, then W


def test_load_model_again_replaces_what_recorded_plans_read():
    net = _net(PRODUCT, weights=_product_weights(1.0))
    x = np.ones(8, np.float32)
    assert net.run({"x": x})["y"].tolist() == [8.0] * 4
    held = net.create_extractor()  # an extractor that keeps its plan lent across the reload
    held.input("x", vkncnn.Mat(x))
    assert held.extract("y")[1].numpy().tolist() == [8.0] * 4
    net.load_model(_product_weights(2.0))
    assert net.run({"x": x})["y"].tolist() == [16.0] * 4  # a cached plan would give 8 (or read freed memory)
    assert held.extract("y")[1].numpy().tolist() == [8.0] * 4  # what it computed stays, as in ncnn
    held.clear()  # its plan, recorded against the old weights, is dropped: cached, it would be the next replayed
    assert net.run({"x": x})["y"].tolist() == [16.0] * 4
    assert (net.gpu.plans_recorded, net.gpu.plans_replayed) == (2, 2)


def test_gpu_matches_cpu_on_a_benchmark_model():
    weights = random_weights(str(param_path("mobilenet")), seed=0)
    x = np.random.default_rng(1).uniform(-1, 1, (3, 224, 224)).astype(np.float32)
    out = {}
    for gpu in (False, True):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = False
        net.load_param(str(param_path("mobilenet")))
        net.load_model(weights)
        (out[gpu],) = net.run({net.input_names()[0]: x}).values()
    assert np.abs(out[True] - out[False]).max() <= 1e-4 * max(1, np.abs(out[False]).max())


def test_threads_share_one_net():
    net = _net()
    rng = np.random.default_rng(2)
    xs = [rng.uniform(-1, 1, (4, 8, 8)).astype(np.float32) for _ in range(8)]
    want = [_expect(x) for x in xs]
    got = [None] * len(xs)

    def work(i):
        for _ in range(5):
            with net.create_extractor() as ex:
                ex.input("x", vkncnn.Mat(xs[i]))
                got[i] = ex.extract("y")[1].numpy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-2, atol=1e-3)


def test_no_device_falls_back_to_cpu_with_one_warning(monkeypatch):
    monkeypatch.setattr(instance, "get_gpu_count", lambda: 0)
    from vkncnn import log
    monkeypatch.setattr(log, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = _net()
    assert net.gpu is None
    assert sum("CPU" in str(w.message) for w in caught) == 1
    x = np.linspace(-1, 1, 10, dtype=np.float32)
    np.testing.assert_allclose(net.run({"x": x})["y"], _expect(x), rtol=1e-6)


def test_device_memory_returns_after_dropping_nets():
    from vkncnn.gpu.vulkan.allocator import live_device_bytes

    def held():
        gc.collect()
        return live_device_bytes()

    weights = random_weights(str(param_path("squeezenet")), seed=0)
    x = np.zeros((3, 64, 64), np.float32)
    for _ in range(3):
        n = vkncnn.Net()
        n.load_param(str(param_path("squeezenet")))
        n.load_model(weights)
        n.run({n.input_names()[0]: x})
        n.clear()
        del n
    base = held()
    for _ in range(20):
        n = vkncnn.Net()
        n.load_param(str(param_path("squeezenet")))
        n.load_model(weights)
        n.run({n.input_names()[0]: x})
        assert held() > base  # the net really holds device memory while alive
        del n
    assert held() <= base


def test_repeated_extracts_do_not_grow_memory():
    net = _net()
    x = np.ones((8, 16, 16), np.float32)
    for _ in range(50):
        net.run({"x": x})
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    held0 = net.gpu.bytes_held()
    for _ in range(1000):
        net.run({"x": x})
    assert net.gpu.bytes_held() == held0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 20 * 1024  # KiB


def test_destroy_gpu_instance_while_net_alive_is_safe():
    net = _net()
    x = np.ones((2, 3, 4), np.float32)
    net.run({"x": x})
    vkncnn.destroy_gpu_instance()
    # the live net keeps its device; a replay still works, then everything is released
    np.testing.assert_allclose(net.run({"x": x})["y"], _expect(x), rtol=1e-2)
    del net
    gc.collect()
    assert vkncnn.get_gpu_count() >= 1  # a new instance comes up on demand


def _fresh_warnings(monkeypatch):
    from vkncnn import log
    monkeypatch.setattr(log, "_warned", set())


def test_device_that_fails_to_create_falls_back_with_one_warning(monkeypatch):
    from vkncnn.errors import GpuError

    def broken(index=None):
        raise GpuError("vkCreateDevice failed: VK_ERROR_INITIALIZATION_FAILED")

    monkeypatch.setattr(instance, "get_gpu_device", broken)
    _fresh_warnings(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = _net()
    assert net.gpu is None
    assert [str(w.message) for w in caught if "vkCreateDevice" in str(w.message)]
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    np.testing.assert_allclose(net.run({"x": x})["y"], _expect(x), rtol=1e-6)


def test_out_of_device_memory_while_loading_is_a_clear_error(monkeypatch):
    from vkncnn.errors import GpuError
    from vkncnn.gpu.vulkan import allocator

    def no_memory(self, size, retain_device=True):
        raise GpuError(f"out of device memory: could not allocate {size} bytes")

    weights = random_weights(str(param_path("squeezenet")), seed=0)
    net = vkncnn.Net()
    net.load_param(str(param_path("squeezenet")))
    monkeypatch.setattr(allocator.VkWeightAllocator, "fastMalloc", no_memory)
    with pytest.raises(GpuError, match="out of device memory"):
        net.load_model(weights)


def test_out_of_device_memory_while_running_is_a_clear_error(monkeypatch):
    from vkncnn.errors import GpuError
    from vkncnn.gpu.vulkan import allocator

    net = _net()
    real = allocator.VkBlobAllocator.fastMalloc

    def no_memory(self, size, retain_device=True):
        if size > 1 << 20:
            raise GpuError(f"out of device memory: could not allocate {size} bytes")
        return real(self, size, retain_device)

    monkeypatch.setattr(allocator.VkBlobAllocator, "fastMalloc", no_memory)
    with pytest.raises(GpuError, match="out of device memory"):
        net.run({"x": np.ones((256, 64, 128), np.float32)})
    monkeypatch.undo()  # memory is back: the same net runs again
    x = np.ones((4, 4, 4), np.float32)
    np.testing.assert_allclose(net.run({"x": x})["y"], _expect(x), rtol=1e-2)


def test_device_lost_is_a_clear_error_not_a_crash(monkeypatch):
    from vkncnn.errors import GpuError
    from vkncnn.gpu.vulkan import device

    net = _net()
    x = np.ones((2, 3, 4), np.float32)
    net.run({"x": x})

    def lost(self, command_buffer, fence):
        raise GpuError("vkQueueSubmit failed: VK_ERROR_DEVICE_LOST")

    monkeypatch.setattr(device.VulkanDevice, "submit_and_wait", lost)
    with pytest.raises(GpuError, match="DEVICE_LOST"):
        net.run({"x": x})


def test_several_outputs_per_extractor_replay_correctly():
    text = """7767517
4 5
Input in 0 1 x
Split s 1 2 x x1 x2
ReLU r 1 1 x1 y 0=0.5
TimesTwo t 1 1 x2 z
"""
    net = _net(text)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.uniform(-1, 1, (4, 6, 5)).astype(np.float32)
        with net.create_extractor() as ex:
            ex.input("x", vkncnn.Mat(x))
            y = ex.extract("y")[1].numpy()
            z = ex.extract("z")[1].numpy()
        np.testing.assert_allclose(y, np.where(x < 0, 0.5 * x, x), rtol=1e-2, atol=1e-3)
        np.testing.assert_allclose(z, 2 * x, rtol=1e-2, atol=1e-3)
    assert net.gpu.plans_recorded == 2 and net.gpu.plans_replayed == 6


RESIDUAL = """7767517
5 6
Input in 0 1 x
Split sp 1 2 x x1 x2
ReLU pre 1 1 x1 a 0=0.1
Eltwise add 2 1 a x2 s 0=1
ReLU post 1 1 s y 0={slope}
"""


@pytest.mark.parametrize("slope", [0.0, 0.25])
def test_relu_after_eltwise_is_fused_and_the_sum_stays_extractable(monkeypatch, slope):
    """The planner folds `post` into the Eltwise's dispatch (one dispatch fewer); the
    un-activated sum `s` is never stored, so extracting it afterwards computes it afresh."""
    import vkncnn.gpu.plan_recorder as runtime
    from vkncnn.gpu.fusion import Fusions

    x = np.random.default_rng(1).uniform(-1, 1, (8, 5, 6)).astype(np.float32)
    s = np.where(x < 0, 0.1 * x, x) + x
    y = np.where(s < 0, slope * s, s)
    counts = []
    for fuse in (True, False):
        if not fuse:
            monkeypatch.setattr(runtime, "plan_fusions", lambda *args: Fusions())
        net = _net(RESIDUAL.replace("{slope}", str(slope)), use_fp16_storage=False)
        with net.create_extractor() as ex:
            ex.input("x", vkncnn.Mat(x))
            np.testing.assert_allclose(ex.extract("y")[1].numpy(), y, rtol=1e-6, atol=1e-6)
            counts.append(ex._gpu.plans[0].cmd.dispatch_count)
            np.testing.assert_allclose(ex.extract("s")[1].numpy(), s, rtol=1e-6, atol=1e-6)
    assert counts[0] == counts[1] - 1


RESIDUAL_CONV = """7767517
6 8
Input in 0 1 x
Split sp 1 2 x x1 x2
Convolution c1 1 1 x1 a 0=16 1=3 4=1 5=1 6=2304 9=1
Convolution c2 1 1 a b 0=16 1=3 4=1 5=1 6=2304
Eltwise add 2 1 x2 b s 0=1
ReLU post 1 1 s y
"""


@pytest.mark.parametrize("kernel", ["tiled", "direct", "split_k", "tensor_cores", "winograd"])
@pytest.mark.parametrize("fp16", [False, True])
def test_residual_sum_and_relu_fold_into_the_convolution(monkeypatch, tmp_path, kernel, fp16):
    """conv -> Eltwise sum -> ReLU is one dispatch (two fewer) in every convolution kernel
    (tensor cores only where the device has them, else the tiled kernel runs again; Winograd
    folds them into its output transform), equal to the numpy path; the un-summed conv
    output and the sum stay extractable."""
    import vkncnn.gpu.ops.convolution as gpu_conv
    import vkncnn.gpu.ops.winograd_convolution as gpu_winograd
    import vkncnn.gpu.plan_recorder as runtime
    from vkncnn.gpu.fusion import Fusions

    if kernel == "winograd":
        monkeypatch.setattr(gpu_winograd, "winograd_device", lambda vkdev: True)
        monkeypatch.setattr(gpu_winograd, "WINOGRAD_MIN_MACS", 0)
        ran = []
        record = gpu_conv.record_winograd
        monkeypatch.setattr(gpu_conv, "record_winograd", lambda *a, **kw: (ran.append(1), record(*a, **kw))[1])
    if kernel != "tiled":
        monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 1 << 40 if kernel == "direct" else 0)
    monkeypatch.setattr(gpu_conv, "TENSOR_CORE_MIN_MACS", 0 if kernel == "tensor_cores" else 1 << 40)
    param = tmp_path / "res.param"
    param.write_text(RESIDUAL_CONV)
    weights = random_weights(str(param), seed=3, input_shapes=(16, 9, 7))
    x = np.random.default_rng(2).uniform(-1, 1, (16, 9, 7)).astype(np.float32)

    def run(gpu, blobs=("y", "b", "s")):
        net = _net(RESIDUAL_CONV, gpu, weights, use_fp16_storage=fp16, use_fp16_packed=fp16)
        with net.create_extractor() as ex:
            ex.input("x", vkncnn.Mat(x))
            out = [ex.extract(name)[1].numpy() for name in blobs]
            dispatches = ex._gpu.plans[0].cmd.dispatch_count if gpu else 0
        return out, dispatches

    ref, _ = run(False)
    got, fused = run(True)
    tol = 2e-2 if fp16 else 1e-5
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * np.abs(r).max())
    assert (ref[0] == 0).any() and (ref[2] < 0).any()  # the ReLU and the sum both matter
    monkeypatch.setattr(runtime, "plan_fusions", lambda *args: Fusions())
    _, unfused = run(True, ("y",))
    assert fused == unfused - 2
    if kernel == "winograd":
        assert ran  # the Winograd path really recorded



_NOT_FOLDED_TAIL = {
    "the conv has an activation": ("9=1", "Eltwise add 2 1 x2 b s 0=1\nReLU post 1 1 s y\n", 5, 7),
    "coefficients": ("", "Eltwise add 2 1 x2 b s 0=1 -23301=2,1.0,0.5\nReLU post 1 1 s y\n", 5, 7),
    "the conv output read twice": ("", "Split sp2 1 2 b b1 b2\nEltwise add 2 1 x2 b1 s 0=1\n"
                                       "Eltwise add2 2 1 s b2 y 0=1\n", 6, 9),
}


@pytest.mark.parametrize("case", sorted(_NOT_FOLDED_TAIL))
def test_residual_sums_that_must_not_fold(monkeypatch, tmp_path, case):
    """No residual folding where its conditions fail; the results stay the numpy path's."""
    import vkncnn.gpu.plan_recorder as runtime

    act, tail, layers, blobs = _NOT_FOLDED_TAIL[case]
    text = (f"7767517\n{layers} {blobs}\nInput in 0 1 x\nSplit sp 1 2 x x1 x2\n"
            f"Convolution c2 1 1 x1 b 0=16 1=3 4=1 5=1 6=2304 {act}\n" + tail)
    param = tmp_path / "n.param"
    param.write_text(text)
    weights = random_weights(str(param), seed=3, input_shapes=(16, 9, 7))
    x = np.random.default_rng(2).uniform(-1, 1, (16, 9, 7)).astype(np.float32)
    plans = []
    real = runtime.plan_fusions
    monkeypatch.setattr(runtime, "plan_fusions", lambda *a: plans.append(real(*a)) or plans[-1])
    outs = [_net(text, gpu, weights, use_fp16_storage=False).run({"x": x})["y"] for gpu in (False, True)]
    assert plans and all(not p.residual for p in plans)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
