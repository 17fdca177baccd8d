"""The pyncnn-shaped API: Net, Extractor, custom layers, lazy evaluation, light mode."""

import numpy as np
import pytest

import vkncnn
from vkncnn.testing import rel_err

CHAIN = """7767517
5 5
Input in 0 1 x
Count a 1 1 x a
Count b 1 1 a b
Input in2 0 1 x2
Count c 1 1 x2 c
"""


class Count(vkncnn.Layer):
    """A pyncnn-style custom layer: y = x + 1, counting its calls."""

    calls: list[str] = []

    def __init__(self):
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom, top, opt):
        Count.calls.append(self.name)
        top.clone_from(vkncnn.Mat(bottom.numpy() + 1))
        return 0


def _net(text=CHAIN, **opt):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    for k, v in opt.items():
        setattr(net.opt, k, v)
    net.register_custom_layer("Count", Count)
    net.load_param_mem(text)
    return net


def test_lazy_evaluation_runs_only_what_is_needed():
    Count.calls.clear()
    net = _net()
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(np.zeros(3, np.float32)))
        ret, out = ex.extract("b")
        assert ret == 0 and out.numpy().tolist() == [2, 2, 2]
    assert Count.calls == ["a", "b"]  # c's branch was never needed, nor its input


def test_intermediate_blob_by_name_and_index():
    net = _net()
    with net.create_extractor() as ex:
        ex.input(0, vkncnn.Mat(np.ones(2, np.float32)))
        assert ex.extract("a")[1].numpy().tolist() == [2, 2]
        assert ex.extract(net.find_blob_index_by_name("b"))[1].numpy().tolist() == [3, 3]


def test_input_output_names():
    net = _net()
    assert net.input_names() == ["x", "x2"]
    assert net.output_names() == ["b", "c"]
    assert net.input_indexes() == [0, 3]


def test_missing_input_and_unknown_blob_are_clear_errors():
    net = _net()
    with net.create_extractor() as ex:
        with pytest.raises(vkncnn.Error, match="'x2'"):
            ex.extract("c")
        with pytest.raises(vkncnn.BlobNotFoundError, match="nope"):
            ex.extract("nope")


def test_light_mode_recomputes_a_dropped_intermediate():
    Count.calls.clear()
    net = _net()
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(np.zeros(1, np.float32)))
        ex.extract("b")
        assert ex.extract("a")[1].numpy().tolist() == [1]  # dropped after b ran, recomputed
    assert Count.calls == ["a", "b", "a"]


def test_light_mode_off_keeps_intermediates():
    Count.calls.clear()
    net = _net()
    with net.create_extractor() as ex:
        ex.set_light_mode(False)
        ex.input("x", vkncnn.Mat(np.zeros(1, np.float32)))
        ex.extract("b")
        ex.extract("a")
    assert Count.calls == ["a", "b"]


def test_split_fan_out_and_several_outputs():
    text = """7767517
4 5
Input in 0 1 x
Split s 1 2 x x1 x2
ReLU r 1 1 x1 y 0=0.5
ReLU r2 1 1 x2 z
"""
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(text)
    out = net.run({"x": np.array([-2, 4], np.float32)})
    assert out["y"].tolist() == [-1, 4] and out["z"].tolist() == [0, 4]


def test_extract_into_given_mat_and_clear():
    net = _net()
    ex = net.create_extractor()
    ex.input("x", vkncnn.Mat(np.zeros(2, np.float32)))
    m = vkncnn.Mat()
    assert ex.extract("a", m) == 0 and m.numpy().tolist() == [1, 1]
    ex.clear()
    with pytest.raises(vkncnn.Error):
        ex.extract("a")


def test_net_context_manager_and_clear():
    with _net() as net:
        assert len(net.layers()) == 5
    assert net.layers() == []


def test_user_input_array_is_never_modified():
    arr = np.array([-1.0, 2.0], np.float32)
    before = arr.copy()
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x y\n")
    net.run({"x": arr})
    assert np.array_equal(arr, before)


def test_registry_decorator_adds_a_type():
    @vkncnn.register_layer("TimesTwoForTest")
    class TimesTwo(vkncnn.Layer):
        def __init__(self):
            super().__init__()
            self.one_blob_only = True

        def forward_cpu(self, bottoms, opt):
            return [bottoms[0] * 2]

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\nTimesTwoForTest t 1 1 x y\n")
    assert net.run({"x": np.ones(2, np.float32)})["y"].tolist() == [2, 2]


def test_deep_chain_has_no_recursion_limit():
    n = 3000
    lines = ["Input in 0 1 b0"] + [f"ReLU r{i} 1 1 b{i} b{i + 1}" for i in range(n)]
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(f"7767517\n{n + 1} {n + 1}\n" + "\n".join(lines) + "\n")
    assert net.run({"b0": np.array([1.0], np.float32)})[f"b{n}"].tolist() == [1.0]


def test_custom_layer_error_names_the_layer():
    class Broken(vkncnn.Layer):
        def __init__(self):
            super().__init__()
            self.one_blob_only = True

        def forward(self, bottom, top, opt):
            return -1

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.register_custom_layer("Broken", Broken)
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\nBroken bad 1 1 x y\n")
    with pytest.raises(vkncnn.LayerError, match="'bad'"):
        net.run({"x": np.ones(1, np.float32)})


def test_threads_share_one_net_on_the_cpu():
    import threading

    from vkncnn.tools.benchmark_models import param_path
    from vkncnn.tools.randweights import random_weights

    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param(str(param_path("squeezenet")))
    net.load_model(random_weights(str(param_path("squeezenet")), seed=0))
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (3, 67, 67)).astype(np.float32) for _ in range(6)]
    want = [net.run({"data": x})["output"] for x in xs]
    got = [[] for _ in xs]

    def work(i):
        for _ in range(3):
            got[i].append(net.run({"data": xs[i]})["output"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # within 1e-5, not bit for bit: OpenBLAS's products may differ in their last bits from
    # run to run (seen on an AMD EPYC, even one thread after another); a thread reading
    # another's blobs would be off by far more
    for w, g in zip(want, got):
        assert len(g) == 3 and all(rel_err(r, w) <= 1e-5 for r in g)


def test_turning_vulkan_on_after_load_warns_and_stays_on_numpy(recwarn):
    import warnings

    from vkncnn import log
    log._warned.clear()
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in0 0 1 in0\nReLU r 1 1 in0 out0\n")
    net.opt.use_vulkan_compute = True  # real ncnn segfaults on the extract below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = net.create_extractor()
    assert any("after load_param" in str(w.message) and w.filename == __file__ for w in caught)
    ex.input("in0", vkncnn.Mat(np.array([-1.0, 2.0], np.float32)))
    assert np.array_equal(ex.extract("out0")[1].numpy(), [0.0, 2.0]) and net.gpu is None
