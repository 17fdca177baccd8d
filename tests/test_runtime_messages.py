"""What the runtime tells its user: warnings point at the user's line and name the fix; the
logger reports the device chosen, the host layers and the kernels; the Vulkan loader is
found under Android's name too."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn import log
from vkncnn.gpu import planner
from vkncnn.gpu.vulkan import instance
from vkncnn.testing import random_net_weights

PARAM = """7767517
3 3
Input in0 0 1 in0 0=4 1=4 2=3
Convolution conv 1 1 in0 c 0=8 1=3 4=1 5=1 6=216
Softmax sm 1 1 c out0 0=0
"""


def _net_on_gpu() -> vkncnn.Net:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = True
    net.load_param_mem(PARAM)
    return net


def test_no_device_warning_points_at_the_callers_line(monkeypatch):
    monkeypatch.setattr(instance, "get_gpu_count", lambda: 0)
    monkeypatch.setattr(log, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = _net_on_gpu()
    found = [w for w in caught if "no Vulkan device found" in str(w.message)]
    assert len(found) == 1, [str(w.message) for w in caught]
    w = found[0]
    assert w.category is RuntimeWarning
    assert w.filename == __file__  # the user's line, not vkncnn's
    assert "mesa-vulkan-drivers" in str(w.message) and "use_vulkan_compute = False" in str(w.message)
    assert net.gpu is None


def test_missing_binding_warning_names_the_extra(monkeypatch):
    def no_binding():
        raise ImportError("No module named 'vulkan'")

    monkeypatch.setattr(instance, "get_gpu_count", no_binding)
    monkeypatch.setattr(log, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _net_on_gpu()
    (w,) = [w for w in caught if "Vulkan unavailable" in str(w.message)]
    assert w.filename == __file__
    assert "pip install 'vkncnn[gpu]'" in str(w.message)


def _has_gpu() -> bool:
    try:
        return instance.get_gpu_count() > 0
    except Exception:  # noqa: BLE001 - any failure means no usable device here
        return False


@pytest.mark.gpu
def test_logger_reports_device_host_layers_and_kernels(caplog):
    if not _has_gpu():
        pytest.skip("no Vulkan device")
    param = PARAM.replace("3 3\n", "4 4\n").replace(
        "Softmax sm 1 1 c out0 0=0", "Softmax sm 1 1 c s 0=0\nCumulativeSum cumsum 1 1 s out0 0=0")
    with caplog.at_level(logging.DEBUG, logger="vkncnn"):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = True
        net.load_param_mem(param)
        net.load_model(random_net_weights(param))
        with net.create_extractor() as ex:
            ex.input("in0", vkncnn.Mat(np.ones((3, 4, 4), np.float32)))
            ex.extract("out0")
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "vkncnn")
    assert "Vulkan device 0 of" in text and "chosen by the default" in text
    assert "1 of 4 layers have no Vulkan shader" in text and "cumsum (CumulativeSum)" in text
    assert "layer 'conv' (Convolution): convolution" in text


def test_vulkan_loader_found_under_androids_name():
    """A machine whose loader is not called libvulkan.so.1 (Android's is libvulkan.so): the
    `vulkan` package's own dlopen fails, vk.load retries with the FALLBACK_LOADERS names."""
    folders = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
    real = sorted(q for d in folders if Path(d).is_dir() for q in Path(d).glob("libvulkan.so.1.*"))
    if not real:
        pytest.skip("no versioned libvulkan.so.1.* to stand in for Android's libvulkan.so")
    pytest.importorskip("vulkan._vulkancache")
    code = f"""
import importlib.util, os, sys
spec = importlib.util.find_spec("vulkan")
path = os.path.join(os.path.dirname(spec.origin), "_vulkancache.py")
cs = importlib.util.spec_from_file_location("vulkan._vulkancache", path)
cache = importlib.util.module_from_spec(cs); cs.loader.exec_module(cache)
sys.modules["vulkan._vulkancache"] = cache
real = cache.ffi
opened = []
class NoSoOne:  # this machine, without a file called libvulkan.so.1
    def dlopen(self, name, *a):
        opened.append(name)
        if name == "libvulkan.so.1":
            raise OSError("libvulkan.so.1: cannot open shared object file")
        return real.dlopen(name, *a)
    def __getattr__(self, n):
        return getattr(real, n)
cache.ffi = NoSoOne()
from vkncnn.gpu.vulkan import vk
vk.FALLBACK_LOADERS = ("libvulkan-absent.so", {str(real[0])!r})
mod = vk.load()
assert opened[0] == "libvulkan.so.1" and opened[-1] == {str(real[0])!r}, opened
assert mod.ffi is cache.ffi and sys.modules["vulkan._vulkan"].ffi is cache.ffi  # the wrapper is gone
print("ok", mod.lib is not None)
"""
    root = str(Path(vkncnn.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok True"


def test_planner_imports_logger():
    assert planner.logger is log.logger
