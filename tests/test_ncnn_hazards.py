"""Where the ncnn pip binding crashes or silently returns wrong numbers, vkncnn is right.

Each test runs the hazard in real ncnn (in a subprocess when it crashes the process)
to show the failure is real, then the same in vkncnn to show it is handled.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vkncnn

ncnn = pytest.importorskip("ncnn")

RELU_NET = "7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x y\n"


def _vk_net(text=RELU_NET, gpu=False):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param_mem(text)
    net.load_model(b"")
    return net


def _run_ncnn_script(body: str) -> subprocess.CompletedProcess:
    code = "import numpy as np, ncnn\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_transposed_array_read_wrongly_by_ncnn_right_by_vkncnn():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T  # (4, 3), not C-contiguous
    assert not np.array_equal(np.array(ncnn.Mat(a)), a)  # ncnn reads the raw buffer order
    assert np.array_equal(vkncnn.Mat(a).numpy(), a)
    assert np.array_equal(_vk_net().run({"x": a})["y"], a)


def test_float64_and_int_arrays_are_converted_not_reinterpreted():
    a64 = np.array([[1.5, -2.0], [3.0, 4.25]])
    m = ncnn.Mat(a64)
    assert m.elemsize == 8  # ncnn keeps 8-byte elements: every layer would read garbage floats
    assert np.array_equal(vkncnn.Mat(a64).numpy(), a64.astype(np.float32))
    ai = np.array([1, -2, 3], dtype=np.int32)
    assert np.array_equal(_vk_net().run({"x": ai})["y"], [1, 0, 3])


def test_mat_outlives_its_array():
    # ncnn's Mat does not keep the array alive; reading it afterwards reads freed memory.
    m = vkncnn.Mat(np.arange(1000, dtype=np.float32))
    junk = [np.full(1000, 7.0, np.float32) for _ in range(50)]  # reuse the freed memory
    assert np.array_equal(m.numpy(), np.arange(1000, dtype=np.float32)) and junk


def test_mat_shares_a_float32_array_as_pyncnn_but_the_net_never_writes_into_it():
    a = np.ones(4, np.float32)
    for module in (vkncnn, ncnn):  # both write through into the user's array
        a[...] = 1.0
        m = module.Mat(a)
        m.fill(5.0)
        assert a[0] == 5.0, module.__name__
    a = np.array([[-1.0, 2.0]], np.float32)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem("7767517\n2 2\nInput in0 0 1 in0\nReLU relu 1 1 in0 out0\n")  # ReLU works in place
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(a))
        _, out = ex.extract("out0")
    assert np.array_equal(out.numpy(), [[0.0, 2.0]]) and np.array_equal(a, [[-1.0, 2.0]])


def test_converting_an_unsupported_mat_segfaults_ncnn_but_not_vkncnn():
    r = _run_ncnn_script("""
        m = ncnn.Mat(np.zeros((2, 2), np.float64))
        print(np.asarray(m).sum())
    """)
    assert r.returncode < 0 or r.returncode > 1, r  # killed by a signal (segfault)
    m = vkncnn.Mat(np.zeros((2, 2), np.float64))
    assert np.asarray(m).dtype == np.float32 and np.asarray(m).shape == (2, 2)


def test_inplace_first_layer_on_numpy_input_segfaults_ncnn_but_not_vkncnn():
    r = _run_ncnn_script(f"""
        net = ncnn.Net()
        net.load_param_mem({RELU_NET!r})
        ex = net.create_extractor()
        ex.input("x", ncnn.Mat(np.array([-1.0, 2.0], np.float32)))
        print(np.array(ex.extract("y")[1]))
    """)
    assert r.returncode != 0, r
    x = np.array([-1.0, 2.0], np.float32)
    assert np.array_equal(_vk_net().run({"x": x})["y"], [0.0, 2.0])
    assert np.array_equal(x, [-1.0, 2.0])


@pytest.mark.gpu
def test_unaligned_channel_planes_wrong_on_ncnn_gpu_right_on_vkncnn():
    if vkncnn.get_gpu_count() == 0:
        pytest.skip("no Vulkan device")
    r = _run_ncnn_script(f"""
        net = ncnn.Net()
        net.opt.use_vulkan_compute = True
        net.load_param_mem({RELU_NET!r})
        x = np.random.default_rng(0).standard_normal((3, 5, 5)).astype(np.float32)
        ex = net.create_extractor()
        m = ncnn.Mat(x)
        ex.input("x", m)
        y = np.array(ex.extract("y")[1])
        print(float(np.abs(y - np.maximum(x, 0)).max()))
    """)
    if r.returncode == 0:
        assert float(r.stdout.split()[-1]) > 1e-3, "ncnn got it right here; the hazard did not reproduce"
    x = np.random.default_rng(0).standard_normal((3, 5, 5)).astype(np.float32)
    y = _vk_net(gpu=True).run({"x": x})["y"]
    assert np.abs(y - np.maximum(x, 0)).max() < 1e-2
