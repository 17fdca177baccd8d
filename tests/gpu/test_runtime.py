"""The Vulkan runtime core: instance, device, allocators, VkMat, Pipeline, VkCompute, VkTransfer.

Runs on whatever device the loader gives (lavapipe here and in CI). With
VKNCNN_VALIDATION=1 every test also asserts the validation layer stayed silent;
test_validation_clean runs a full scenario under validation in a subprocess either way.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from vkncnn.errors import GpuError
from vkncnn.gpu.compiler import glslang
from vkncnn.gpu.compiler.source import compiler_disabled
from vkncnn.gpu.compiler.spirv_reflect import reflect
from vkncnn.gpu.run_shader import run_shader
from vkncnn.gpu.vulkan import instance, vk
from vkncnn.gpu.vulkan.allocator import VkBlobAllocator, VkStagingAllocator, VkWeightAllocator
from vkncnn.gpu.vulkan.barriers import (
    COMPUTE,
    SHADER_READ,
    SHADER_WRITE,
    TRANSFER,
    TRANSFER_READ,
    TRANSFER_WRITE,
    BarrierTracker,
)
from vkncnn.gpu.vulkan.command import HostSlot, ReplanNeeded, VkCompute, VkTransfer
from vkncnn.gpu.vulkan.lifetime import run_deferred
from vkncnn.gpu.vulkan.packing import convert_packing
from vkncnn.gpu.vulkan.pipeline import Pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat, pack_into, unpack
from vkncnn.option import Option

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPES = [(7,), (5, 13), (3, 6, 7), (12, 2, 3, 5), (8, 4, 4), (6, 3, 5)]


def _has_gpu() -> bool:
    return instance.get_gpu_count() > 0  # 0, not an exception, without Vulkan


needs_gpu = pytest.mark.skipif(not _has_gpu(), reason=f"no Vulkan device ({instance.unavailable_reason()})")


@pytest.fixture(autouse=True)
def validation_stays_silent():
    """Under VKNCNN_VALIDATION=1: no test may produce a validation message."""
    instance.clear_validation_messages()
    yield
    messages = list(instance.validation_messages())
    instance.clear_validation_messages()
    assert messages == []


@pytest.fixture
def dev():
    return instance.get_gpu_device()


def opt_fp(fp16: bool = False) -> Option:
    opt = Option()
    opt.use_fp16_storage = fp16
    return opt


def compile_glsl(source: str, fp16: bool = False) -> bytes:
    from vkncnn.gpu.compiler.registry import compile_glsl as compile_
    skip_without_compiler()
    return compile_(textwrap.dedent(source), name="test_runtime", fp16_storage=fp16)


def skip_without_compiler() -> None:
    """These tests compile their own shaders: a deployment with VKNCNN_NO_COMPILER (as on the
    H200, where glslang is not installed), or an install without glslang (no `compiler`
    extra, no glslang-tools), can only skip them."""
    if compiler_disabled():
        pytest.skip("VKNCNN_NO_COMPILER is set and this test compiles its own shader")
    if glslang.backend() is None:
        pytest.skip("no GLSL compiler (the compiler extra or glslang-tools) and this test compiles its own shader")


# y = a * x + b in place or into another buffer; the workhorse of the recorder tests.
AXPB = """
#version 450
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (constant_id = 0) const float a = 1;
layout (binding = 0) readonly buffer x_blob { sfp x[]; };
layout (binding = 1) writeonly buffer y_blob { sfp y[]; };
layout (push_constant) uniform parameter { int n; float b; } p;
void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n) return;
    buffer_st1(y, i, buffer_ld1(x, i) * afp(a) + afp(p.b));
}
"""

INPLACE_ADD = """
#version 450
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (binding = 0) buffer x_blob { sfp x[]; };
layout (push_constant) uniform parameter { int n; float b; } p;
void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n) return;
    buffer_st1(x, i, buffer_ld1(x, i) + afp(p.b));
}
"""


def axpb_pipeline(dev, a: float, fp16: bool = False) -> Pipeline:
    p = Pipeline(dev)
    p.set_local_size_xyz(64, 1, 1)
    p.create(compile_glsl(AXPB, fp16), opt_fp(fp16), [a])
    return p


def record_axpb(cmd, p, src: VkMat, dst: VkMat, b: float) -> None:
    n = src.total() * src.elempack
    cmd.record_pipeline(p, [src, dst], [n, b], (n, 1, 1))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- import hygiene ---------------------------------------------------------------------------
def test_import_does_not_load_vulkan():
    code = ("import sys, vkncnn, vkncnn.gpu, vkncnn.gpu.vulkan.command, vkncnn.gpu.vulkan.packing, "
            "vkncnn.gpu.run_shader;"
            "from vkncnn.gpu import VkMat, Pipeline;"
            "assert 'vulkan' not in sys.modules, 'vulkan imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_lazy_exports():
    from vkncnn import gpu
    assert gpu.VkCompute is VkCompute and gpu.run_shader is run_shader and gpu.HostSlot is HostSlot
    with pytest.raises(AttributeError):
        _ = gpu.not_a_name


# -- host layout (pure numpy) -----------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("elempack", [1, 4])
def test_pack_into_unpack_roundtrip(shape, elempack):
    x = rand(*shape)
    m = VkMat.for_numpy_shape(shape, elempack, 4, None)
    packed = np.empty(m.packed_shape(), np.float32)
    pack_into(packed, x, elempack)
    back = unpack(packed, elempack)
    n = shape[0]
    np.testing.assert_array_equal(back[:n], x)
    assert np.all(back[n:] == 0)  # zero padding of a partial pack4 group
    if elempack == 4 and n >= 4:  # item 0 holds entries 0..3 of axis 0 interleaved
        np.testing.assert_array_equal(packed[0, ..., 1], x[1])


def test_vkmat_fields_follow_ncnn():
    m = VkMat.for_numpy_shape((12, 5, 7), 4, 2, None)
    assert (m.dims, m.w, m.h, m.c, m.elemsize, m.elempack, m.cstep) == (3, 7, 5, 3, 8, 4, 35)
    assert m.numpy_shape() == (12, 5, 7) and m.packed_shape() == (3, 5, 7, 4) and m.total() == 105
    m4 = VkMat.for_numpy_shape((8, 2, 3, 5), 1, 4, None)
    assert (m4.dims, m4.w, m4.h, m4.d, m4.c, m4.cstep) == (4, 5, 3, 2, 8, 30)
    assert VkMat.for_numpy_shape((9, 4), 4, 4, None).h == 3
    assert m.empty()


# -- instance, info, device order -------------------------------------------------------------
@needs_gpu
def test_gpu_info_complete():
    assert instance.get_gpu_count() >= 1 and instance.get_default_gpu_index() == 0
    info = instance.get_gpu_info(0)
    assert isinstance(info.device_name(), str) and info.device_name()
    assert info.type() in (0, 1, 2, 3)
    assert info.api_version() >= (1 << 22) | (1 << 12)
    assert len(info.max_workgroup_size()) == 3 and info.max_workgroup_invocations() >= 128
    assert info.memory_heaps() and all(size > 0 for size, _ in info.memory_heaps())
    assert info.compute_queue_family_index() >= 0 and info.compute_queue_count() >= 1
    for probe in (info.support_fp16_storage, info.support_fp16_arithmetic, info.support_int8_storage,
                  info.support_subgroup_ops, info.support_cooperative_matrix):
        assert isinstance(probe(), bool)
    assert info.subgroup_size() >= 1 and info.vendor_id() >= 0 and info.device_id() >= 0
    assert info.driver_version() >= 0 and "GpuInfo" in repr(info)
    with pytest.raises(GpuError, match="out of range"):
        instance.get_gpu_info(99)


def test_device_order_best_first():
    class Fake:
        def __init__(self, t, name):
            self.t, self.name = t, name

        def type(self):
            return self.t

    infos = [Fake(3, "cpu"), Fake(1, "igpu"), Fake(0, "dgpu0"), Fake(2, "virt"), Fake(0, "dgpu1")]
    assert [i.name for i in instance.order_devices(infos)] == ["dgpu0", "dgpu1", "igpu", "virt", "cpu"]


@needs_gpu
def test_device_is_a_singleton_with_queue(dev):
    assert instance.get_gpu_device(0) is dev and dev.queue is not None
    assert dev.info is instance.get_gpu_info(0)
    assert instance.get_gpu_device(None) is dev  # None = default device


# -- end to end -------------------------------------------------------------------------------
@needs_gpu
@pytest.mark.parametrize("fp16", [False, True])
def test_upload_dispatch_download(dev, fp16):
    if fp16 and not dev.info.support_fp16_storage():
        pytest.skip("no fp16 storage")
    x = rand(3, 5, 7)
    cmd = VkCompute(dev)
    p = axpb_pipeline(dev, 2.0, fp16)
    src = cmd.record_upload(x, opt_fp(fp16))
    assert src.elemsize == (2 if fp16 else 4)
    dst = VkMat.create_like(src, cmd.blob_allocator())
    record_axpb(cmd, p, src, dst, 0.5)
    d = cmd.record_download(dst, opt_fp(fp16))
    assert cmd.submit_and_wait() == 0
    ref = x * 2 + 0.5
    assert d.array.dtype == np.float32 and d.array.shape == x.shape
    np.testing.assert_allclose(d.array, ref, rtol=1e-2 if fp16 else 1e-6, atol=1e-2 if fp16 else 1e-6)
    cmd.release()
    src.release()
    dst.release()


@needs_gpu
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("elempack", [1, 4])
@pytest.mark.parametrize("fp16", [False, True])
def test_upload_download_roundtrip(dev, shape, elempack, fp16):
    x = rand(*shape, seed=len(shape))
    cmd = VkCompute(dev)
    m = cmd.record_upload(x, opt_fp(fp16), elempack=elempack)
    assert m.elempack == elempack and m.dims == len(shape)
    d = cmd.record_download(m, opt_fp(fp16))
    cmd.submit_and_wait()
    expect = x.astype(np.float16).astype(np.float32) if fp16 and dev.info.support_fp16_storage() else x
    n = shape[0]
    np.testing.assert_array_equal(d.array[:n], expect)
    assert np.all(d.array[n:] == 0)
    cmd.release()
    m.release()


@needs_gpu
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fp16", [False, True])
def test_convert_packing_on_gpu(dev, shape, fp16):
    x = rand(*shape, seed=3)
    opt = opt_fp(fp16)
    cmd = VkCompute(dev)
    m1 = cmd.record_upload(x, opt, elempack=1)
    m4 = convert_packing(m1, 4, cmd, opt)
    back = dev.convert_packing(m4, 1, cmd, opt)  # the VulkanDevice method, as ncnn has it
    d4, d1 = cmd.record_download(m4, opt), cmd.record_download(back, opt)
    host4 = cmd.record_upload(x, opt, elempack=4)
    dh = cmd.record_download(host4, opt)
    cmd.submit_and_wait()
    n = shape[0]
    assert m4.elempack == 4 and m4.numpy_shape()[0] == -(-n // 4) * 4
    assert convert_packing(m4, 4, cmd, opt) is m4
    np.testing.assert_array_equal(d4.array, dh.array)  # GPU packing == host packing, padding too
    expect = x.astype(np.float16).astype(np.float32) if fp16 and dev.info.support_fp16_storage() else x
    np.testing.assert_array_equal(d1.array[:n], expect)
    cmd.release()


@needs_gpu
def test_record_clone_is_a_copy(dev):
    x = rand(4, 3, 3)
    cmd = VkCompute(dev)
    a = cmd.record_upload(x, opt_fp(), elempack=4)
    b = cmd.record_clone(a, opt_fp())
    p = Pipeline(dev)
    p.set_local_size_xyz(64, 1, 1)
    p.create(compile_glsl(INPLACE_ADD), opt_fp())
    cmd.record_pipeline(p, [a], [x.size, 1.0], (x.size, 1, 1))  # changes a, not its clone
    da, db = cmd.record_download(a), cmd.record_download(b)
    cmd.submit_and_wait()
    assert b.buffer != a.buffer and b.elempack == 4
    np.testing.assert_array_equal(db.array, x)
    np.testing.assert_allclose(da.array, x + 1, rtol=1e-6)
    cmd.release()


@needs_gpu
@pytest.mark.parametrize("name,elempack", [("relu", 1), ("relu_pack4", 4)])
def test_builtin_shader_by_name(dev, name, elempack):
    x = rand(8, 3, 5)
    opt = opt_fp()
    cmd = VkCompute(dev)
    m = cmd.record_upload(x, opt, elempack=elempack)
    p = Pipeline(dev)
    p.set_optimal_local_size_xyz(64, 1, 1)
    p.create(name, opt, [0.5, 0])  # leaky slope 0.5; n from the push constant
    cmd.record_pipeline(p, [m], [m.total()], (m.total(), 1, 1))
    d = cmd.record_download(m)
    cmd.submit_and_wait()
    np.testing.assert_allclose(d.array, np.where(x < 0, x * 0.5, x), rtol=1e-6)
    cmd.release()


@needs_gpu
def test_reshape_is_a_view(dev):
    cmd = VkCompute(dev)
    x = rand(2, 3, 4)
    m = cmd.record_upload(x, opt_fp())
    flat = m.reshape(24, dims=1)
    assert flat.buffer == m.buffer and flat.numpy_shape() == (24,)
    d = cmd.record_download(flat)
    cmd.submit_and_wait()
    np.testing.assert_array_equal(d.array, x.reshape(-1))
    m.release()
    assert not flat.empty()  # the view keeps the buffer
    flat.release()
    with pytest.raises(GpuError, match="elempack 1"):
        cmd.record_upload(rand(4, 2, 2), opt_fp(), elempack=4).reshape(16, dims=1)
    with pytest.raises(GpuError, match="cannot become"):
        cmd.record_upload(x, opt_fp()).reshape(5, dims=1)
    with pytest.raises(GpuError, match="dims"):
        VkMat.create(4, allocator=cmd.blob_allocator())
    cmd.release()


@needs_gpu
def test_device_pools_and_budget(dev):
    assert dev.get_heap_budget() > 0
    a = dev.acquire_blob_allocator()
    dev.reclaim_blob_allocator(a)
    assert dev.acquire_blob_allocator() is a  # pooled, as ncnn's VulkanDevice does
    dev.reclaim_blob_allocator(a)
    s = dev.acquire_staging_allocator()
    assert s.mappable and s.coherent and s.buffer_memory_type_index >= 0
    dev.reclaim_staging_allocator(s)


@needs_gpu
def test_empty_input_is_stored_at_the_plans_precision(dev):
    """An empty per-inference input has nothing to cast, but the layers after it read its
    scalar size: fp16 storage must give it 2-byte scalars like every other blob."""
    if not dev.info.support_fp16_storage():
        pytest.skip("no 16-bit storage")
    cmd = VkCompute(dev)
    for fp16, elemsize in ((True, 2), (False, 4)):
        mat = cmd.record_upload(HostSlot(np.zeros((3, 0, 4), np.float32)), opt_fp(fp16), elempack=4)
        assert mat.empty() and mat.elemsize == elemsize * 4
    cmd.release()


# -- steps, host steps, replay ------------------------------------------------------------------
@needs_gpu
def test_host_steps_and_replay(dev):
    opt = opt_fp()
    cmd = VkCompute(dev)
    p2 = axpb_pipeline(dev, 2.0)
    slot_in, slot_mid = HostSlot(rand(16)), HostSlot(None)
    a = cmd.record_upload(slot_in, opt)
    b = VkMat.create_like(a, cmd.blob_allocator())
    record_axpb(cmd, p2, a, b, 0.0)
    first = cmd.record_download(b)
    calls = []

    def cpu_layer():  # a CPU-fallback layer between two GPU segments
        calls.append(1)
        slot_mid.array = (first.array + 1).astype(np.float32)

    cmd.record_host(cpu_layer)
    cmd.submit_and_wait()  # planning run: the host step's output shape is known now
    assert calls == [1]
    c = cmd.record_upload(slot_mid, opt)
    dd = VkMat.create_like(c, cmd.blob_allocator())
    record_axpb(cmd, p2, c, dd, 0.0)
    final = cmd.record_download(dd)
    cmd.submit_and_wait()  # runs only the new segment
    assert calls == [1] and cmd.steps == 3
    np.testing.assert_allclose(final.array, (slot_in.array * 2 + 1) * 2, rtol=1e-6)

    for seed in (1, 2):  # next inferences: new input data, same shapes, replay everything
        slot_in.array = rand(16, seed=seed)
        cmd.replay()
        np.testing.assert_allclose(final.array, (slot_in.array * 2 + 1) * 2, rtol=1e-6)
    assert len(calls) == 3

    slot_in.array = rand(17)
    with pytest.raises(ReplanNeeded, match="changed"):
        cmd.replay()
    slot_in.array = rand(16).astype(np.float64)
    with pytest.raises(ReplanNeeded):
        cmd.replay()
    cmd.release()
    with pytest.raises(GpuError, match="after release"):
        cmd.replay()


@needs_gpu
def test_dependent_dispatches_and_buffer_reuse(dev):
    """A chain of RAW/WAW/WAR hazards in one command buffer, and a buffer reused after release."""
    opt = opt_fp()
    alloc = VkBlobAllocator(dev)
    opt.blob_vkallocator = alloc
    cmd = VkCompute(dev)
    x = rand(1000)
    a = cmd.record_upload(x, opt)
    add = Pipeline(dev)
    add.set_local_size_xyz(64, 1, 1)
    add.create(compile_glsl(INPLACE_ADD), opt)
    for _ in range(20):  # read-modify-write of one buffer 20 times
        cmd.record_pipeline(add, [a], [x.size, 1.0], (x.size, 1, 1))
    p3 = axpb_pipeline(dev, 3.0)
    b = VkMat.create_like(a, alloc)
    record_axpb(cmd, p3, a, b, 0.0)          # b = 3a        (RAW on a)
    cmd.record_pipeline(add, [a], [x.size, 100.0], (x.size, 1, 1))  # a += 100 (WAR: b's read of a)
    old_key = a.data.key
    da = cmd.record_download(a)
    a.release()                              # a's buffer goes back to the pool...
    c = VkMat.create_like(b, alloc)          # ...and comes out again as c
    assert c.data.key == old_key
    record_axpb(cmd, p3, b, c, 1.0)          # c = 3b + 1    (WAR on the download's read of a)
    db, dc = cmd.record_download(b), cmd.record_download(c)
    cmd.submit_and_wait()
    np.testing.assert_allclose(da.array, x + 120, rtol=1e-5)
    np.testing.assert_allclose(db.array, 3 * (x + 20), rtol=1e-5)
    np.testing.assert_allclose(dc.array, 9 * (x + 20) + 1, rtol=1e-5)
    cmd.replay()  # replay: the same hazards across the segment boundary
    np.testing.assert_allclose(dc.array, 9 * (x + 20) + 1, rtol=1e-5)
    cmd.release()
    b.release()
    c.release()
    alloc.clear()
    assert alloc.bytes_held == 0


def test_barrier_tracker_hazard_rules(monkeypatch):
    emitted = []
    monkeypatch.setattr(BarrierTracker, "_emit", lambda self, cb, s, d, sa, da: emitted.append((s, sa)))

    class BM:
        def __init__(self, key):
            self.key = key

    t, a, b, c = BarrierTracker(), BM(1), BM(2), BM(3)
    t.access(None, [(a, TRANSFER, 0, TRANSFER_WRITE)])          # first write: nothing before it
    assert emitted == []
    t.access(None, [(a, COMPUTE, SHADER_READ, 0), (b, COMPUTE, 0, SHADER_WRITE)])  # RAW on a
    assert emitted[-1] == (TRANSFER, TRANSFER_WRITE)
    t.access(None, [(a, COMPUTE, SHADER_READ, 0)])              # read after read: no barrier
    t.access(None, [(c, COMPUTE, 0, SHADER_WRITE)])             # an independent write: none either
    t.access(None, [(a, TRANSFER, TRANSFER_READ, 0)])           # a's write is visible to every stage now
    assert len(emitted) == 1
    t.access(None, [(a, COMPUTE, 0, SHADER_WRITE)])             # WAR on a: waits for every pending access
    assert emitted[-1] == (COMPUTE | TRANSFER, SHADER_WRITE)
    t.access(None, [(c, COMPUTE, SHADER_READ, 0), (b, TRANSFER, TRANSFER_READ, 0)])  # made visible by it
    assert len(emitted) == 2
    t.access(None, [(a, TRANSFER, 0, TRANSFER_WRITE)])          # WAW on a
    assert emitted[-1] == (COMPUTE | TRANSFER, SHADER_WRITE)
    assert len(emitted) == 3


@needs_gpu
def test_submit_only_runs_new_steps(dev):
    cmd = VkCompute(dev)
    ran = []
    cmd.record_host(lambda: ran.append("a"))
    cmd.submit_and_wait()
    cmd.record_host(lambda: ran.append("b"))
    cmd.submit_and_wait()
    cmd.submit_and_wait()
    assert ran == ["a", "b"]
    cmd.replay()
    assert ran == ["a", "b", "a", "b"]
    with pytest.raises(GpuError):
        cmd.record_host(42)
    cmd.release()


# -- pipelines --------------------------------------------------------------------------------
def test_spirv_reflection():
    info = reflect(compile_glsl(AXPB))
    assert info.binding_count == 2
    assert (info.bindings[0].reads, info.bindings[0].writes) == (True, False)
    assert (info.bindings[1].reads, info.bindings[1].writes) == (False, True)
    assert info.push_constant_size == 8 and info.push_constants == [(0, "i"), (4, "f")]
    assert info.spec_kinds[0] == "f" and info.local_size_from_spec
    rw = reflect(compile_glsl(INPLACE_ADD))
    assert (rw.bindings[0].reads, rw.bindings[0].writes) == (True, True)
    with pytest.raises(GpuError, match="not SPIR-V"):
        reflect(b"\0" * 24)


@needs_gpu
def test_pipeline_checks_and_cache(dev):
    p = axpb_pipeline(dev, 2)  # an int for a float spec constant still means 2.0
    assert p.binding_count == 2 and p.push_constant_size == 8
    q = axpb_pipeline(dev, 2.0)
    assert q.pipeline == p.pipeline  # same SPIR-V + constants + local size: one VkPipeline
    assert axpb_pipeline(dev, 3.0).pipeline != p.pipeline
    cmd = VkCompute(dev)
    x = rand(10)
    a = cmd.record_upload(x, opt_fp())
    with pytest.raises(GpuError, match="bindings"):
        cmd.record_pipeline(p, [a], [10, 0.0], (10, 1, 1))
    with pytest.raises(GpuError, match="push constants"):
        cmd.record_pipeline(p, [a, a], [10], (10, 1, 1))
    with pytest.raises(GpuError, match="not created"):
        cmd.record_pipeline(Pipeline(dev), [a], [], (1, 1, 1))
    with pytest.raises(GpuError, match="integer"):
        cmd.record_pipeline(p, [a, a], [10.5, 0.0], (10, 1, 1))
    b = VkMat.create_like(a, cmd.blob_allocator())
    cmd.record_pipeline(p, [a, b], [np.int64(10), np.float32(1.5)], (10, 1, 1))
    d = cmd.record_download(b)
    cmd.submit_and_wait()
    np.testing.assert_allclose(d.array, x * 2 + 1.5, rtol=1e-6)
    cmd.release()


@needs_gpu
def test_local_size_choice(dev):
    p = Pipeline(dev)
    p.set_optimal_local_size_xyz()
    assert p.local_size == (4, 4, 4)
    p.set_optimal_local_size_xyz(1000, 1, 1)
    assert p.local_size[0] <= 256 and p.local_size[1:] == (1, 1)
    p.set_optimal_local_size_xyz(100, 100, 100)
    x, y, z = p.local_size
    assert x * y * z <= min(256, dev.info.max_workgroup_invocations()) and min(x, y, z) >= 1
    p.set_optimal_local_size_xyz(3, 0, -1)
    assert p.local_size == (2, 4, 4)
    with pytest.raises(GpuError, match="exceeds"):
        p.set_local_size_xyz(dev.info.max_workgroup_invocations() + 1, 1, 1)


@needs_gpu
def test_fixed_local_size_shader_is_respected(dev):
    skip_without_compiler()
    src = """
    #version 450
    layout (local_size_x = 8) in;
    layout (binding = 0) writeonly buffer o_blob { float o[]; };
    void main() { o[gl_GlobalInvocationID.x] = float(gl_WorkGroupID.x); }
    """
    out, = run_shader(src, [], [(32,)], (32, 1, 1), local_size=(64, 1, 1))
    np.testing.assert_array_equal(out, np.repeat(np.arange(4), 8))


@needs_gpu
def test_empty_tensors(dev):
    cmd = VkCompute(dev)
    e = cmd.record_upload(np.zeros((0, 3), np.float32), opt_fp())
    assert e.empty() and e.numpy_shape() == (0, 3)
    d = cmd.record_download(e)
    assert d.array.shape == (0, 3)
    p = axpb_pipeline(dev, 1.0)
    cmd.record_pipeline(p, [e, e], [0, 0.0], e)  # nothing to do: no dispatch recorded
    assert cmd.dispatch_count == 0
    cmd.submit_and_wait()
    cmd.release()


# -- transfer, allocators ---------------------------------------------------------------------
@needs_gpu
def test_vktransfer_weights_into_weight_allocator(dev):
    weights = VkWeightAllocator(dev)
    opt = opt_fp()
    opt.blob_vkallocator = weights
    up = VkTransfer(dev)
    w1 = up.record_upload(rand(100, seed=1), opt)
    w2 = up.record_upload(rand(8, 3, 3, seed=2), opt, elempack=4)
    w3 = up.record_upload(rand(50, seed=3), None, allocator=weights)
    up.submit_and_wait()
    up.release()
    assert w1.buffer == w2.buffer and w2.buffer_offset > 0  # sub-allocated from one block
    assert w2.buffer_offset % dev.info.min_storage_buffer_offset_alignment() == 0
    cmd = VkCompute(dev)  # the weights are on the device: use them
    dl = [cmd.record_download(w) for w in (w1, w2, w3)]
    cmd.submit_and_wait()
    np.testing.assert_array_equal(dl[0].array, rand(100, seed=1))
    np.testing.assert_array_equal(dl[1].array, rand(8, 3, 3, seed=2))
    np.testing.assert_array_equal(dl[2].array, rand(50, seed=3))
    cmd.release()
    assert weights.bytes_held > 0
    weights.clear()
    assert weights.bytes_held == 0 and w1.data.dead
    w1.release()  # a dead weight releases quietly


@needs_gpu
def test_blob_allocator_pools_by_size(dev):
    alloc = VkBlobAllocator(dev)
    a = alloc.fastMalloc(1000)
    held = alloc.bytes_held
    assert held >= 1000 and alloc.bytes_in_use == held
    alloc.fastFree(a)
    assert alloc.bytes_in_use == 0 and alloc.bytes_held == held
    b = alloc.fastMalloc(900)  # same size class: the pooled buffer comes back
    assert b is a and alloc.bytes_held == held
    c = alloc.fastMalloc(100000)
    assert c is not a and alloc.bytes_held > held
    alloc.fastFree(b)
    alloc.fastFree(c)
    alloc.clear()
    assert alloc.bytes_held == 0
    with pytest.raises(GpuError, match="positive"):
        alloc.fastMalloc(0)


@needs_gpu
def test_staging_is_mapped(dev):
    st = VkStagingAllocator(dev)
    bm = st.fastMalloc(64)
    assert bm.mapped is not None and bm.mapped.nbytes >= 64
    bm.mapped[:4] = [1, 2, 3, 4]
    st.fastFree(bm)
    st.clear()
    assert st.bytes_held == 0


@needs_gpu
def test_no_leak_after_release(dev):
    alloc, staging = VkBlobAllocator(dev), VkStagingAllocator(dev)
    opt = opt_fp()
    opt.blob_vkallocator, opt.staging_vkallocator = alloc, staging
    cmd = VkCompute(dev)
    m = cmd.record_upload(rand(4, 8, 8), opt, elempack=4)
    m1 = convert_packing(m, 1, cmd, opt)
    d = cmd.record_download(m1, opt)
    cmd.submit_and_wait()
    assert d.array.shape == (4, 8, 8)
    cmd.release()
    m.release()
    m1.release()
    alloc.clear()
    staging.clear()
    assert alloc.bytes_held == 0 and staging.bytes_held == 0


@needs_gpu
def test_out_of_device_memory_is_a_clear_error(dev):
    alloc = VkBlobAllocator(dev)
    with pytest.raises(GpuError, match=r"out of device memory.*\d+ bytes"):
        alloc.fastMalloc(1 << 52)
    with pytest.raises(GpuError, match="out of device memory"):
        VkMat.create(1 << 20, 1 << 20, 1, 1 << 10, 3, 4, 1, alloc)
    assert alloc.bytes_held == 0


# -- run_shader -------------------------------------------------------------------------------
@needs_gpu
def test_run_shader_on_numpy_arrays():
    skip_without_compiler()
    src = """
    #version 450
    layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
    layout (constant_id = 0) const int mode = 0;
    layout (binding = 0) readonly buffer a_blob { sfp a[]; };
    layout (binding = 1) readonly buffer b_blob { sfp b[]; };
    layout (binding = 2) writeonly buffer c_blob { sfp c[]; };
    layout (binding = 3) buffer acc_blob { sfp acc[]; };
    layout (push_constant) uniform parameter { int w; int h; float k; } p;
    void main() {
        int x = int(gl_GlobalInvocationID.x);
        int y = int(gl_GlobalInvocationID.y);
        if (x >= p.w || y >= p.h) return;
        int i = y * p.w + x;
        afp v = mode == 1 ? buffer_ld1(a, i) * buffer_ld1(b, i) : buffer_ld1(a, i) + buffer_ld1(b, i);
        buffer_st1(c, i, v * afp(p.k));
        buffer_st1(acc, i, buffer_ld1(acc, i) + v);
    }
    """
    a, b = rand(6, 9, seed=1), rand(6, 9, seed=2)
    acc = np.ones((6, 9), np.float32)
    c, acc_out = run_shader(src, [a, b], [(6, 9), acc], (9, 6, 1), push_constants=[9, 6, 2],
                            specializations=[1], local_size=(8, 8, 1))
    np.testing.assert_allclose(c, a * b * 2, rtol=1e-6)
    assert acc_out is acc  # filled in place
    np.testing.assert_allclose(acc, 1 + a * b, rtol=1e-6)
    c16, = run_shader(src, [a, b], [(6, 9), np.zeros((6, 9), np.float32)], (9, 6, 1),
                      push_constants=[9, 6, 1], fp16=True, local_size=(8, 8, 1))[:1]
    np.testing.assert_allclose(c16, a + b, rtol=1e-2, atol=1e-2)


@needs_gpu
def test_run_shader_int_buffers():
    skip_without_compiler()
    src = """
    #version 450
    layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
    layout (binding = 0) readonly buffer a_blob { int a[]; };
    layout (binding = 1) writeonly buffer b_blob { int b[]; };
    void main() { uint i = gl_GlobalInvocationID.x; if (i < 10) b[i] = a[i] * a[i]; }
    """
    a = np.arange(10, dtype=np.int32) - 5
    out = np.zeros(10, np.int32)
    run_shader(src, [a], [out], (10, 1, 1))
    np.testing.assert_array_equal(out, a * a)


# -- failures: clear GpuErrors, never a crash ----------------------------------------------------
@pytest.fixture
def fresh_instance():
    """Retire the running instance around a test that breaks instance creation on purpose."""
    instance.destroy_gpu_instance()
    yield
    instance.destroy_gpu_instance()


def _simulate_missing(monkeypatch, exc):
    def fail():
        raise exc
    monkeypatch.setattr(vk, "_import_vulkan", fail)
    monkeypatch.setattr(vk, "_module", None)


def test_no_vulkan_loader(monkeypatch, fresh_instance):
    import vkncnn
    _simulate_missing(monkeypatch, OSError("Cannot find Vulkan SDK version"))
    assert instance.get_gpu_count() == 0 and instance.get_default_gpu_index() == -1
    assert "no Vulkan loader" in instance.unavailable_reason()
    assert vkncnn.get_gpu_count() == 0
    with pytest.raises(GpuError, match="no Vulkan loader"):
        instance.create_gpu_instance()
    with pytest.raises(GpuError, match="no Vulkan loader"):
        instance.get_gpu_device()


def test_no_vulkan_package(monkeypatch, fresh_instance):
    _simulate_missing(monkeypatch, ImportError("No module named 'vulkan'"))
    with pytest.raises(GpuError, match=r"pip install"):
        instance.get_gpu_info(0)


@needs_gpu
def test_no_device(monkeypatch, fresh_instance):
    monkeypatch.setattr(instance, "_enumerate_physical_devices", lambda handle: [])
    assert instance.get_gpu_count() == 0
    with pytest.raises(GpuError, match="no Vulkan device"):
        instance.get_gpu_device()


@needs_gpu
def test_driver_path(fresh_instance):
    before = {k: os.environ.get(k) for k in ("VK_DRIVER_FILES", "VK_ICD_FILENAMES")}
    with pytest.raises(GpuError, match="no Vulkan driver"):
        instance.create_gpu_instance("/nonexistent/icd.json")
    instance.clear_validation_messages()  # the loader reports the missing file, as it should
    assert {k: os.environ.get(k) for k in before} == before  # the override was undone
    lvp = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
    if os.path.exists(lvp):
        assert instance.create_gpu_instance(lvp) == 0
        assert instance.get_gpu_count() >= 1
        assert "llvmpipe" in instance.get_gpu_info(0).device_name()


@needs_gpu
def test_create_device_failure(monkeypatch, fresh_instance):
    from vkncnn.gpu.vulkan import device as device_mod
    monkeypatch.setattr(device_mod, "_device_extensions", lambda info: ["VK_KHR_not_a_real_extension"])
    with pytest.raises(GpuError, match=r"vkCreateDevice.*EXTENSION_NOT_PRESENT.*not_a_real"):
        instance.get_gpu_device()
    instance.clear_validation_messages()  # the validation layer rightly complains about the name
    monkeypatch.undo()
    assert instance.get_gpu_device().info.device_name()  # the next try works


@needs_gpu
def test_destroy_instance_while_objects_live():
    dev = instance.get_gpu_device()
    opt = opt_fp()
    cmd = VkCompute(dev)
    slot = HostSlot(rand(32))
    a = cmd.record_upload(slot, opt)
    b = VkMat.create_like(a, cmd.blob_allocator())
    record_axpb(cmd, axpb_pipeline(dev, 2.0), a, b, 1.0)
    d = cmd.record_download(b)
    cmd.submit_and_wait()

    instance.destroy_gpu_instance()  # retired, not destroyed: a, b and cmd still use it
    assert dev.retired and not dev.destroyed
    slot.array = rand(32, seed=9)
    cmd.replay()
    np.testing.assert_allclose(d.array, slot.array * 2 + 1, rtol=1e-6)
    with pytest.raises(GpuError, match="destroyed"):
        VkCompute(dev)
    new_dev = instance.get_gpu_device()  # a fresh instance starts on demand
    assert new_dev is not dev and new_dev.info.device_name()

    gc.collect()
    run_deferred()  # objects earlier code dropped let go of the device at a safe point
    cmd.release()
    a.release()
    assert not dev.destroyed  # b still holds a buffer
    b.release()
    assert dev.destroyed  # last user gone: the old device and instance are destroyed now
    b.release()  # releasing twice is harmless


# -- validation -------------------------------------------------------------------------------
VALIDATION_SCRIPT = r"""
import numpy as np
from vkncnn.gpu.vulkan import instance
assert instance.current_instance().validation, "validation layer not enabled"
import tests.gpu.test_runtime as t
from vkncnn.gpu.vulkan.barriers import BarrierTracker
dev = instance.get_gpu_device()

# a scenario touching every recorder feature, with sync validation on
t.test_upload_dispatch_download(dev, False)
t.test_upload_dispatch_download(dev, True)
for shape in t.SHAPES[:4]:
    t.test_convert_packing_on_gpu(dev, shape, True)
t.test_record_clone_is_a_copy(dev)
t.test_host_steps_and_replay(dev)
t.test_dependent_dispatches_and_buffer_reuse(dev)
t.test_vktransfer_weights_into_weight_allocator(dev)
t.test_run_shader_on_numpy_arrays()
t.test_out_of_device_memory_is_a_clear_error(dev)
t.test_destroy_instance_while_objects_live()
clean = list(instance.validation_messages())

# negative control: without barriers, sync validation must see the hazards
instance.clear_validation_messages()
dev = instance.get_gpu_device()
BarrierTracker.access = lambda self, cmdbuf, accesses: None
cmd = t.VkCompute(dev)
add = t.Pipeline(dev); add.set_local_size_xyz(64, 1, 1); add.create(t.compile_glsl(t.INPLACE_ADD), t.opt_fp())
a = cmd.record_upload(np.zeros(64, np.float32), t.opt_fp())
cmd.record_pipeline(add, [a], [64, 1.0], (64, 1, 1))
cmd.record_pipeline(add, [a], [64, 1.0], (64, 1, 1))
cmd.submit_and_wait()
hazards = [m for m in instance.validation_messages() if "SYNC-HAZARD" in m]
print("CLEAN", len(clean), "HAZARDS", len(hazards))
for m in clean:
    print("MSG", m[:300])
"""


@needs_gpu
def test_validation_clean():
    """Full scenario under VK_LAYER_KHRONOS_validation + sync validation: zero messages.

    The negative control (barriers switched off) proves the layer and the messenger work.
    """
    skip_without_compiler()
    from vkncnn.gpu.vulkan.instance import _instance_layers
    if "VK_LAYER_KHRONOS_validation" not in _instance_layers():
        pytest.skip("validation layer not installed")
    env = dict(os.environ, VKNCNN_VALIDATION="1")
    proc = subprocess.run([sys.executable, "-c", VALIDATION_SCRIPT], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = [line for line in proc.stdout.splitlines() if line.startswith("CLEAN")][-1].split()
    assert last[1] == "0", proc.stdout[-3000:]
    assert int(last[3]) > 0, "sync validation did not flag missing barriers"


@needs_gpu
def test_spin_wait_gives_the_same_results(dev, monkeypatch):
    """The fence polling used on real GPUs (off on lavapipe, where it would steal a core
    from the driver) waits for the same completion as the blocking wait."""
    monkeypatch.setattr(dev, "_spin_wait", True)
    monkeypatch.setattr(type(dev), "SPIN_WAIT_S", 0.0005)  # expire too: then the blocking wait
    cmd = VkCompute(dev)
    opt = Option()
    opt.use_fp16_storage = False
    slot = HostSlot(rand(1000))
    up = cmd.record_upload(slot, opt)
    down = cmd.record_download(up)
    cmd.submit_and_wait()
    for seed in range(5):
        slot.array = rand(1000, seed=seed)
        cmd.replay()
        np.testing.assert_array_equal(down.array, slot.array)
    cmd.release()


@pytest.mark.parametrize("shape,elempack", [
    ((5000,), 1), ((4096,), 4), ((70, 61), 4), ((6, 33, 40), 4), ((7, 30, 29), 1), ((9, 2, 20, 31), 4),
    ((3, 10, 10), 4),   # below DOWNLOAD_CAST_MIN: cast on the host
])
def test_fp16_download_casts_on_the_gpu_from_its_threshold(shape, elempack):
    """fp16 blobs of DOWNLOAD_CAST_MIN values or more come back through download_cast.comp
    (cast and unpacked on the GPU), smaller ones through numpy: both give the fp16 values
    as fp32, in numpy shape, whatever the packing (channel counts not divisible by 4 too)."""
    from vkncnn.gpu.vulkan.command import DOWNLOAD_CAST_MIN

    vkdev = instance.get_gpu_device()
    if not vkdev.info.support_fp16_storage():
        pytest.skip("no 16-bit storage")
    opt = SimpleNamespace(use_fp16_storage=True, blob_vkallocator=None, staging_vkallocator=None)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    cmd = VkCompute(vkdev)
    try:
        on_device = cmd.record_upload(x, opt, elempack=elempack)
        assert on_device.scalar_size() == 2
        before = cmd.dispatch_count
        d = cmd.record_download(on_device, opt)
        assert (cmd.dispatch_count > before) == (on_device.total() * elempack >= DOWNLOAD_CAST_MIN)
        cmd.submit_and_wait()
        padded = d.array[:shape[0]]
        np.testing.assert_array_equal(padded, x.astype(np.float16).astype(np.float32))
        assert d.array.dtype == np.float32
    finally:
        cmd.release()
