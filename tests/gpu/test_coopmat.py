"""The tensor-core convolution (convolution_coopmat.comp): what can be checked on any device.

Lavapipe (CI) has no VK_KHR_cooperative_matrix, so the kernel's numbers are checked on a
device that has it (the H200: tests/gpu/test_conv_gpu.py and `vkncnn compare --gpu` run
there with the kernel on, see docs/gpu.md and docs/benchmarks.md). Here: the shipped SPIR-V is the
shader we think it is, the device query is sane, and the kernel is never chosen where it
cannot run.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vkncnn.gpu.compiler.registry import get_builtin_spirv
from vkncnn.gpu.compiler.spirv_reflect import reflect
from vkncnn.gpu.ops.convolution import split_k, use_tensor_cores
from vkncnn.gpu.ops.matrix_product import gemm_on_tensor_cores, tensor_core_device
from vkncnn.gpu.ops.winograd_convolution import tensor_core_products
from vkncnn.gpu.vulkan import instance
from vkncnn.net import Net
from vkncnn.option import Option

pytestmark = pytest.mark.gpu


def test_shipped_spirv_declares_the_conv_interface():
    vkdev = instance.get_gpu_device()
    opt = Option()
    opt.use_fp16_storage = True
    info = reflect(get_builtin_spirv("convolution_coopmat", opt, vkdev))
    assert info.local_size == (128, 1, 1) and not info.local_size_from_spec  # 4 subgroups of 32
    assert [(b.reads, b.writes) for b in info.bindings] == [
        (True, False), (False, True), (True, False), (True, False), (False, True), (True, False)]
    assert info.spec_ids == set(range(25))  # the same constants as convolution.comp


def test_shipped_spirv_declares_the_gemm_interface():
    """gemm_coopmat.comp takes gemm.comp's operands and constants (the host swaps them freely)."""
    vkdev = instance.get_gpu_device()
    opt = Option()
    opt.use_fp16_storage = True
    tensor = reflect(get_builtin_spirv("gemm_coopmat", opt, vkdev))
    scalar = reflect(get_builtin_spirv("gemm", opt, vkdev, {"MODE": 0}))
    assert tensor.local_size == (128, 1, 1) and not tensor.local_size_from_spec
    assert [(b.reads, b.writes) for b in tensor.bindings] == [(b.reads, b.writes) for b in scalar.bindings]
    assert tensor.spec_ids == set(range(6)) == scalar.spec_ids - {233, 234, 235}


def test_device_query_is_consistent():
    vkdev = instance.get_gpu_device()
    gi = vkdev.info
    shapes = gi.cooperative_matrix_shapes()
    assert isinstance(shapes, frozenset)
    assert all(len(s) == 5 and min(s[:3]) > 0 for s in shapes)
    if gi.support_cooperative_matrix_16x16x16_fp16():
        assert gi.support_cooperative_matrix() and (16, 16, 16, "f16", "f32") in shapes
    if not gi.support_cooperative_matrix():
        assert not use_tensor_cores(vkdev, 256, 3136, 1024)
        assert not gemm_on_tensor_cores(vkdev, 577, 3072, 768)


def test_switch_and_small_products(monkeypatch):
    vkdev = instance.get_gpu_device()
    monkeypatch.setenv("VKNCNN_COOPMAT", "0")
    assert not use_tensor_cores(vkdev, 256, 3136, 1024)
    assert not gemm_on_tensor_cores(vkdev, 577, 3072, 768)
    assert not tensor_core_products(vkdev, True, 256, 256)
    monkeypatch.delenv("VKNCNN_COOPMAT")
    assert not gemm_on_tensor_cores(vkdev, 8, 1 << 20, 1024)   # fewer than one 16-row fragment
    assert not gemm_on_tensor_cores(vkdev, 577, 3072, 16)      # one 16-deep step of k
    assert not use_tensor_cores(vkdev, 8, 1 << 20, 1024)   # fewer than one 16-row tile of weights
    assert not use_tensor_cores(vkdev, 256, 1 << 20, 32)   # less than two chunks of K
    assert not use_tensor_cores(vkdev, 512, 49, 512)        # 12.8 M multiply-adds: scalar is faster


def test_option_turns_tensor_cores_off(monkeypatch):
    """opt.use_cooperative_matrix = False keeps every kernel choice off the tensor cores, as in
    ncnn; judged on a stand-in for a device that has them, since lavapipe has none."""
    monkeypatch.delenv("VKNCNN_COOPMAT", raising=False)
    tensor_core_gpu = SimpleNamespace(info=SimpleNamespace(support_cooperative_matrix_16x16x16_fp16=lambda: True,
                                                          subgroup_size=lambda: 32))
    assert tensor_core_device(tensor_core_gpu) and not tensor_core_device(tensor_core_gpu, allowed=False)
    assert use_tensor_cores(tensor_core_gpu, 256, 3136, 1024)
    assert not use_tensor_cores(tensor_core_gpu, 256, 3136, 1024, allowed=False)
    assert gemm_on_tensor_cores(tensor_core_gpu, 577, 3072, 768)
    assert not gemm_on_tensor_cores(tensor_core_gpu, 577, 3072, 768, allowed=False)
    assert tensor_core_products(tensor_core_gpu, True, 256, 256)
    assert not tensor_core_products(tensor_core_gpu, True, 256, 256, allowed=False)


def test_option_cleared_where_the_device_has_none():
    net = Net()
    net.opt.use_vulkan_compute = True
    net.load_param_mem("7767517\n2 2\nInput in0 0 1 in0\nReLU relu 1 1 in0 out0\n")
    if net.gpu is None:
        pytest.skip("no Vulkan device")
    info = net.gpu.vkdev.info
    assert net.opt.use_cooperative_matrix == info.support_cooperative_matrix()


@pytest.mark.parametrize("tiles,k,min_slice,want", [
    (8, 4608, 64, 16),     # 512 channels at 7x7, scalar kernel: as many slices as allowed
    (8, 4608, 256, 16),
    (49, 576, 64, 9),      # resnet18's 3x3 at 56x56: the scalar kernel slices thin...
    (49, 576, 128, 4),     # ...the tensor-core one keeps 4 chunks of 32 per slice
    (49, 200, 128, 1),     # too little K to split at all
    (600, 4608, 256, 1),   # enough tiles already
])
def test_split_k(tiles, k, min_slice, want):
    assert split_k(tiles, k, 1024, min_slice) == want
    assert split_k(tiles, k, 1, min_slice) == 1  # a CPU device never splits
