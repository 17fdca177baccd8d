"""ShaderProgram: persistent buffers, recorded replay, push constants, specializations,
GPU timing, fp16 storage, checks against the shader's bindings, and freeing on close.

Runs on whatever device the loader gives (lavapipe here); skips without a device or
without a GLSL compiler, as the other tests that compile their own shaders do.
"""

from __future__ import annotations

import gc
import math
import re
from pathlib import Path

import numpy as np
import pytest

import vkncnn
from vkncnn.errors import ArgumentError, ArgumentTypeError, GpuError, ShapeError
from vkncnn.gpu.compiler import glslang
from vkncnn.gpu.compiler.registry import compile_glsl
from vkncnn.gpu.compiler.source import compiler_disabled
from vkncnn.gpu.vulkan import instance
from vkncnn.gpu.vulkan.allocator import live_device_bytes
from vkncnn.testing import ShaderBuffer, ShaderProgram, ShaderTiming

pytestmark = pytest.mark.gpu

# every test but the one that fakes a missing device
uses_device = pytest.mark.usefixtures("device_and_compiler")

# x[i] = x[i] * scale + step over the first n values: `step` a specialization, n and scale push constants
AXPB = """
#version 450
layout (constant_id = 0) const float step = 1.0;
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (binding = 0) buffer x_blob { sfp x[]; };
layout (push_constant) uniform parameter { int n; float scale; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n)
        return;
    buffer_st1(x, i, buffer_ld1(x, i) * afp(p.scale) + afp(step));
}
"""

# y[i] = a[i] + b[i] as ints; binding 2 is a block with fixed members (16 bytes) before its array
ADD_INT = """
#version 450
layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
layout (binding = 0) readonly buffer a_blob { int a[]; };
layout (binding = 1) readonly buffer b_blob { int b[]; };
layout (binding = 2) writeonly buffer y_blob { ivec4 header; int y[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i < p.n)
        y[i] = a[i] + b[i];
}
"""

UNIFORM = """
#version 450
layout (local_size_x = 1) in;
layout (binding = 0) uniform params_blob { vec4 v; };
layout (binding = 1) buffer y_blob { float y[]; };
void main() { y[0] = v.x; }
"""


@pytest.fixture(scope="module")
def device_and_compiler():
    if instance.get_gpu_count() == 0:
        pytest.skip(f"no Vulkan device ({instance.unavailable_reason()})")
    if compiler_disabled() or glslang.backend() is None:
        pytest.skip("no GLSL compiler (the compiler extra or glslang-tools): these tests compile their shaders")


@pytest.fixture
def prog(device_and_compiler):
    with ShaderProgram(AXPB, specializations=[1.0]) as p:
        yield p


def test_buffers_persist_between_dispatches(prog):
    start = np.arange(100, dtype=np.float32)
    x = prog.buffer(start)
    for _ in range(3):
        prog.dispatch([x], [100, 1], global_size=100)
    np.testing.assert_array_equal(x.read(), start + 3)
    np.testing.assert_array_equal(start, np.arange(100))  # the caller's array is not touched
    prog.dispatch([x], [50, 1], groups=1)  # one workgroup of 64 covers the first 50
    assert prog.local_size == (64, 1, 1)
    np.testing.assert_array_equal(x.read(), start + 3 + (np.arange(100) < 50))


def test_replay_reruns_the_recording_and_sees_writes(prog):
    x = prog.buffer(np.zeros((4, 8), np.float32))
    prog.record([x], [32, 1], global_size=32)
    assert prog.recorded == 1
    prog.replay(4)
    y = x.read()
    assert y.shape == (4, 8) and y.dtype == np.float32
    np.testing.assert_array_equal(y, 4)
    x.write(np.full(32, 10, np.int32))  # any shape and number type with the buffer's count
    prog.replay()
    np.testing.assert_array_equal(x.read(), 11)  # the recording reads the buffer, not an upload
    prog.record([x], [32, 0], global_size=32)  # a second dispatch: x = 0 * x + 1
    prog.replay(2)
    np.testing.assert_array_equal(x.read(), 1)
    prog.clear()
    with pytest.raises(ArgumentError, match="nothing recorded"):
        prog.replay()


@uses_device
def test_push_constants_and_specializations():
    x0 = np.linspace(-2, 2, 300, dtype=np.float32)
    with ShaderProgram(AXPB, specializations=[0.5], local_size=32) as p:
        x = p.buffer(x0)
        p.dispatch([x], [200, 3], global_size=300)  # an int for the float scale is encoded as 3.0f
        assert p.local_size == (32, 1, 1)
        expected = np.where(np.arange(300) < 200, x0 * np.float32(3) + np.float32(0.5), x0)
        np.testing.assert_allclose(x.read(), expected, rtol=1e-6)
        with pytest.raises(ArgumentTypeError, match="push constants"):
            p.dispatch([x], [200, "3"], global_size=300)
        with pytest.raises(ArgumentTypeError, match="push constants"):
            p.dispatch([x], [2.5, 1.0], global_size=300)  # n is an int


@uses_device
def test_int_buffers_and_block_sizes():
    with ShaderProgram(ADD_INT) as p:
        a = p.buffer(np.arange(10, dtype=np.int32) - 5)
        b = p.buffer(np.full(10, 7, np.int64))  # fits int32: stored as int32, read back as int64
        y = p.buffer(4 + 10, np.int32)
        assert (b.storage_dtype, y.shape) == (np.int32, (14,))
        p.dispatch([a, b, y], [10], global_size=10)
        got = y.read()
        assert got.dtype == np.int32 and b.read().dtype == np.int64
        np.testing.assert_array_equal(got[4:], np.arange(10) - 5 + 7)
        small = p.buffer(3, np.int32)  # 12 bytes: binding 2 has a 16-byte member before its array
        with pytest.raises(ArgumentError, match="binding 2 needs at least 16 bytes"):
            p.dispatch([a, b, small], [0], global_size=1)
        with pytest.raises(ArgumentTypeError, match="floats would be truncated"):
            a.write(np.zeros(10, np.float32))
        with pytest.raises(ArgumentError, match="do not fit"):
            b.write(np.full(10, 2**40))


def test_wrong_calls_are_named(prog):
    x = prog.buffer(8)
    with pytest.raises(ArgumentError, match=r"has 1 binding\(s\) .* got 2 buffer"):
        prog.dispatch([x, x], [8, 1], global_size=8)
    with pytest.raises(ArgumentError, match=r"push-constant block has 2 scalar\(s\) \(8 bytes\), got 1"):
        prog.dispatch([x], [8], global_size=8)
    with pytest.raises(ArgumentError, match="global_size .* or groups"):
        prog.dispatch([x], [8, 1])
    with pytest.raises(ArgumentError, match="global_size .* or groups"):
        prog.record([x], [8, 1], global_size=8, groups=1)
    with pytest.raises(ArgumentError, match="at least 1"):
        prog.dispatch([x], [8, 1], global_size=(8, 0))
    with pytest.raises(ArgumentError, match="exceed the device's limit"):
        prog.dispatch([x], [8, 1], groups=(2**32 - 1, 1, 1))
    with pytest.raises(ArgumentTypeError, match="list of ShaderBuffers"):
        prog.dispatch(x, [8, 1], global_size=8)
    with pytest.raises(ArgumentTypeError, match=r"buffers\[0\] must be a ShaderBuffer"):
        prog.dispatch([np.zeros(8, np.float32)], [8, 1], global_size=8)
    with ShaderProgram(AXPB) as other:
        with pytest.raises(ArgumentError, match="belongs to another ShaderProgram"):
            prog.dispatch([other.buffer(8)], [8, 1], global_size=8)
    with pytest.raises(ShapeError, match=r"holds 8 values \(shape \(8,\)\), got 9"):
        x.write(np.zeros(9, np.float32))
    for bad in (0, (2, 0), -1):
        with pytest.raises(ArgumentError):
            prog.buffer(bad)
    with pytest.raises(ArgumentTypeError, match="floats or ints"):
        prog.buffer(4, np.complex64)
    assert prog.recorded == 0  # nothing half-recorded by the refused calls


@uses_device
def test_shader_sources_and_refusals(tmp_path):
    path = tmp_path / "axpb.comp"
    path.write_text(AXPB)
    with ShaderProgram(path) as p:
        assert p.name == "axpb.comp" and p.binding_count == 1 and p.push_constant_count == 2
    spirv = compile_glsl(AXPB, name="axpb")
    with ShaderProgram(spirv) as p:
        x = p.buffer(np.zeros(4, np.float32))
        p.dispatch([x], [4, 1], global_size=4)
        np.testing.assert_array_equal(x.read(), 1)
    with pytest.raises(ArgumentError, match="not found"):
        ShaderProgram(str(tmp_path / "missing.comp"))
    with pytest.raises(ArgumentError, match="uniform block"):
        ShaderProgram(UNIFORM)
    with pytest.raises(vkncnn.ShaderCompileError):
        ShaderProgram("#version 450\nvoid main() { undefined_name = 1; }")
    with pytest.raises(GpuError, match="local size"):
        ShaderProgram(AXPB, local_size=(4096, 4096, 1))
    with pytest.raises(GpuError, match="index 99 out of range"):
        ShaderProgram(AXPB, device=99)


def test_no_device_names_the_fix(monkeypatch):
    from vkncnn.gpu import shader_program

    def no_device(index=None):
        raise GpuError("no Vulkan device found (the loader works but reports no physical device)")
    monkeypatch.setattr(shader_program, "get_gpu_device", no_device)
    monkeypatch.setattr(shader_program, "get_gpu_count", lambda: 0)
    with pytest.raises(GpuError, match="needs a Vulkan device .* mesa-vulkan-drivers"):
        ShaderProgram(AXPB)


def test_timing_gives_one_positive_time_per_run(prog):
    x = prog.buffer(np.zeros(4096, np.float32))
    timing = prog.time([x], [4096, 1], global_size=4096, n=7, warmup=2)
    assert isinstance(timing, ShaderTiming) and (timing.runs, timing.dispatches) == (7, 1)
    for values in (timing.gpu_us, timing.wall_us, timing.per_dispatch_us[0]):
        assert len(values) == 7 and all(math.isfinite(v) and v > 0 for v in values)
    assert timing.min_us <= timing.median_us <= timing.max_us
    assert timing.wall_median_us > 0 and "us per dispatch" in str(timing)
    np.testing.assert_array_equal(x.read(), 9)  # 2 warm-up + 7 timed runs of the dispatch

    prog.record([x], [4096, 1], global_size=4096)
    prog.record([x], [4096, 0], global_size=4096)
    timing = prog.time(n=3, warmup=0)  # the recorded sequence
    assert timing.dispatches == 2 and [len(t) for t in timing.per_dispatch_us] == [3, 3]
    assert all(v > 0 for v in timing.dispatch_medians_us())
    np.testing.assert_allclose(timing.gpu_us, np.sum(timing.per_dispatch_us, axis=0))
    with pytest.raises(ArgumentError, match="at least 1"):
        prog.time(n=0)


@uses_device
def test_fp16_buffers():
    if not vkncnn.get_gpu_info(0).support_fp16_storage():
        pytest.skip("no 16-bit storage")
    x0 = (np.arange(64, dtype=np.float32) / 3).astype(np.float32)
    with ShaderProgram(AXPB, fp16=True, specializations=[0.0]) as p:
        x = p.buffer(x0)
        assert x.storage_dtype == np.float16 and x.nbytes == 128
        np.testing.assert_array_equal(x.read(), x0.astype(np.float16).astype(np.float32))
        p.dispatch([x], [64, 2], global_size=64)
        np.testing.assert_array_equal(x.read(), (x0.astype(np.float16) * 2).astype(np.float32))
        h = p.buffer(np.ones(8, np.float16))
        assert h.read().dtype == np.float16


@uses_device
def test_close_frees_device_memory():
    gc.collect()
    before = live_device_bytes()
    p = ShaderProgram(AXPB)
    x = p.buffer(np.zeros(1 << 16, np.float32))
    p.record([x], [1 << 16, 1], global_size=1 << 16)
    p.replay(2)
    p.time(n=2, warmup=0)
    x.read()
    assert live_device_bytes() - before >= (1 << 18)  # the buffer and its staging copies
    p.close()
    assert live_device_bytes() == before
    p.close()  # twice is fine
    with pytest.raises(GpuError, match="after close"):
        p.replay()
    with pytest.raises(GpuError, match="after its program was closed"):
        x.read()

    with ShaderProgram(AXPB) as p:  # the end of a with block
        p.buffer(np.zeros(1000, np.float32)).read()
    assert p.closed and live_device_bytes() == before

    p = ShaderProgram(AXPB)  # garbage collection, buffer and program in a cycle through the recording
    y = p.buffer(np.zeros(1000, np.float32))
    p.record([y], [1000, 1], global_size=1000)
    p.replay()
    del p, y
    gc.collect()
    assert live_device_bytes() == before  # the finalizers queued the releases; this runs them


@uses_device
def test_exported_names():
    from vkncnn import gpu, testing
    assert gpu.ShaderProgram is testing.ShaderProgram and gpu.ShaderBuffer is ShaderBuffer
    assert testing.run_shader is gpu.run_shader


@uses_device
def test_the_user_page_snippets_run(capsys):
    """docs/shader-harness.md: every python block runs as shown (its asserts included)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "shader-harness.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, "docs/shader-harness.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.count("ArgumentError") == 2 and "ShapeError" in out and "us per dispatch" in out
    assert re.search(r"^Convolution 0=16 1=3 5=1 6=432 .* PASS$", out, re.M)
