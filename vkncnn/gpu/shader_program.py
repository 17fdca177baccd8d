"""ShaderProgram: a compute shader with persistent device buffers, recorded replay and GPU timing.

    with ShaderProgram(GLSL, local_size=(64, 1, 1), specializations=[0.1]) as prog:
        x = prog.buffer(np.random.rand(4096).astype(np.float32))
        y = prog.buffer(x.shape)                          # zeros, float32
        prog.dispatch([x, y], [4096], global_size=4096)   # run once now
        print(y.read())
        prog.record([x, y], [4096], global_size=4096)     # append to the program's sequence
        prog.replay(10)                                   # run the sequence 10 times, no upload
        print(prog.time(n=100, warmup=10))                # GPU timestamps per run

run_shader (run_shader.py) is the one-shot form: compile, upload, dispatch once,
download. A program keeps what run_shader throws away, so iterating on a kernel costs
only the dispatch: the pipeline (shared device-wide, as every pipeline of the runtime:
vulkan/pipeline.shader_pipeline), buffers that stay on the device between dispatches
(shader_buffer.py), and a recorded command buffer that replay() submits again.

The shader is GLSL source, a path to a GLSL file (its folder joins the #include path),
or SPIR-V bytes; GLSL gets vkncnn's preamble (`sfp`, `afp`, `buffer_ld1`, ...), with
`sfp` = float16_t when fp16=True. Bindings are set 0, bindings 0..n-1, one buffer each,
in order; push constants are the scalars of the push-constant block, in order, typed
as the shader declares them; specializations fill constant_id 0, 1, ...; the local
size goes in through constant ids 233/234/235 unless the shader fixes it.

Everything is checked against the SPIR-V before anything runs: the number of buffers,
each buffer's size against its block's fixed members, the push constants, the work size
against the device's limits. Mistakes raise vkncnn.Error subclasses saying what was
expected and what came. close() (or the end of a `with` block, or garbage collection)
frees the buffers, the recordings and their device memory. A program is for one thread
at a time.
"""

from __future__ import annotations

import os
import time
import weakref
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..array_checks import is_int
from ..errors import ArgumentError, ArgumentTypeError, GpuError
from .compiler.registry import compile_glsl, spirv_target
from .compiler.spirv_reflect import MAGIC
from .shader_buffer import ShaderBuffer, host_dtype_of
from .shader_timing import ShaderTiming
from .vulkan import lifetime
from .vulkan.allocator import VkBlobAllocator, VkStagingAllocator
from .vulkan.command import VkCompute
from .vulkan.instance import get_gpu_count, get_gpu_device
from .vulkan.pipeline import shader_pipeline
from .vulkan.timestamps import LayerTimer

# a shader file larger than this is not a shader: refuse it before reading it all
MAX_SHADER_FILE_BYTES = 16 << 20

NO_DEVICE_FIX = ("install a Vulkan driver: your GPU vendor's, or Mesa's lavapipe, which runs on the CPU "
                 "(Debian/Ubuntu: apt install mesa-vulkan-drivers); `vkncnn devices` lists what vkncnn finds")


class _Dispatch:
    """One checked dispatch: the buffers it binds, its push constants and its global size."""

    __slots__ = ("buffers", "global_size", "push_constants")

    def __init__(self, buffers: tuple, push_constants: list, global_size: tuple) -> None:
        self.buffers = buffers
        self.push_constants = push_constants
        self.global_size = global_size


def load_shader(shader, include_dirs) -> tuple:
    """(GLSL text or SPIR-V bytes, a name for messages, the #include folders)."""
    dirs = [Path(d) for d in include_dirs or ()]
    if isinstance(shader, (bytes, bytearray, memoryview)):
        return bytes(shader), "SPIR-V", dirs
    # GLSL always has a '{' (main's body); a path has none
    if isinstance(shader, os.PathLike) or (isinstance(shader, str) and "{" not in shader and "\n" not in shader):
        path = Path(shader)
        if not path.is_file():
            raise ArgumentError(f"shader file {str(path)!r} not found (pass GLSL source text, the path of a GLSL "
                                "file, or SPIR-V bytes)")
        size = path.stat().st_size
        if size > MAX_SHADER_FILE_BYTES:
            raise ArgumentError(f"shader file {str(path)!r} has {size} bytes: not a shader "
                                f"(the limit is {MAX_SHADER_FILE_BYTES})")
        data = path.read_bytes()
        if data[:4] == MAGIC.to_bytes(4, "little"):
            return data, path.name, dirs
        try:
            return data.decode("utf-8"), path.name, [path.parent, *dirs]
        except UnicodeDecodeError as e:
            raise ArgumentError(f"shader file {str(path)!r} is neither UTF-8 GLSL nor SPIR-V ({e})") from None
    if isinstance(shader, str):
        return shader, "shader", dirs
    raise ArgumentTypeError(f"ShaderProgram: expected GLSL source (str), a path, or SPIR-V bytes, "
                            f"got {type(shader).__name__}")


def find_device(device):
    """The VulkanDevice for `device` (None: the best one; an index; or a VulkanDevice)."""
    if device is not None and not is_int(device):
        if not hasattr(device, "info") or not hasattr(device, "check_alive"):
            raise ArgumentTypeError(f"device: expected a GPU index (int) or a VulkanDevice, "
                                    f"got {type(device).__name__}")
        return device
    try:
        return get_gpu_device(None if device is None else int(device))
    except GpuError as e:
        count = get_gpu_count()
        if count == 0:
            raise GpuError(f"ShaderProgram needs a Vulkan device and found none ({e}): {NO_DEVICE_FIX}") from None
        raise GpuError(f"ShaderProgram: {e}; pass device=0..{count - 1} (`vkncnn devices` lists them)") from None


def int_triple(value, what: str) -> tuple:
    """An int or 1-3 ints as (x, y, z), each at least 1."""
    values = (value,) if is_int(value) else value
    if not isinstance(values, (tuple, list)) or not 1 <= len(values) <= 3 or not all(is_int(v) for v in values):
        raise ArgumentTypeError(f"{what}: expected an int or 1 to 3 ints, got {value!r:.60}")
    sizes = tuple(int(v) for v in values) + (1,) * (3 - len(values))
    if min(sizes) < 1:
        raise ArgumentError(f"{what}: every size must be at least 1, got {sizes}")
    return sizes


class ShaderProgram:
    """A compiled compute shader with its own device buffers (see the module doc)."""

    def __init__(self, shader, local_size=(64, 1, 1), specializations=(), defines: dict | None = None,
                 fp16: bool = False, device=None, include_dirs=None) -> None:
        self._closed = True  # until built: a half-made program has nothing to free
        lifetime.run_deferred()
        code, self.name, dirs = load_shader(shader, include_dirs)
        local_size = int_triple(local_size, "local_size")
        specializations = list(specializations)
        vkdev = find_device(device)
        vkdev.check_alive("ShaderProgram")
        self.fp16 = bool(fp16)
        if self.fp16 and not vkdev.info.support_fp16_storage():
            raise GpuError(f"ShaderProgram(fp16=True): '{vkdev.info.device_name()}' has no 16-bit storage; "
                           "use fp16=False")
        if isinstance(code, bytes):
            if defines:
                raise ArgumentError("ShaderProgram: defines apply to GLSL source, not to SPIR-V")
            spirv = code
        else:
            spirv = compile_glsl(code, defines, name=self.name, fp16_storage=self.fp16, include_dirs=dirs,
                                 target=spirv_target(vkdev))
        self._pipeline = shader_pipeline(vkdev, spirv, self.fp16, specializations, local_size)
        info = self._pipeline.shader_info
        for b, role in enumerate(info.bindings):
            if not role.storage:
                raise ArgumentError(f"{self.name}: binding {b} is a uniform block; a ShaderProgram binds storage "
                                    "buffers (declare it `buffer`, or pass the values as push constants)")
        self._info = info
        self.device = vkdev
        self._blob = VkBlobAllocator(vkdev)
        self._staging = VkStagingAllocator(vkdev)
        self._opt = SimpleNamespace(use_fp16_storage=self.fp16, blob_vkallocator=self._blob,
                                    staging_vkallocator=self._staging)
        self._buffers: weakref.WeakSet = weakref.WeakSet()
        self._made = 0
        self._sequence: list[_Dispatch] = []
        self._recording: VkCompute | None = None
        vkdev.retain()  # the shared pipeline lives as long as the device: keep it while in use
        self._closed = False

    # -- what the shader declares -------------------------------------------------------------
    @property
    def local_size(self) -> tuple:
        """The local size the pipeline runs with (the shader's own, where it fixes one)."""
        return self._pipeline.local_size

    @property
    def binding_count(self) -> int:
        return self._info.binding_count

    @property
    def push_constant_count(self) -> int:
        return len(self._info.push_constants)

    @property
    def recorded(self) -> int:
        """Dispatches in the recorded sequence."""
        return len(self._sequence)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- buffers ------------------------------------------------------------------------------
    def buffer(self, array_or_shape, dtype=None) -> ShaderBuffer:
        """A device buffer: from an array (its values, shape and dtype), or a shape (an int or a
        tuple; zeros of `dtype`, default float32). It lives until close()."""
        self._check_open("buffer()")
        lifetime.run_deferred()
        shape_given = is_int(array_or_shape) or (isinstance(array_or_shape, tuple)
                                                  and all(is_int(s) for s in array_or_shape))
        if shape_given:
            shape = (int(array_or_shape),) if is_int(array_or_shape) else tuple(array_or_shape)
            data = None
            dtype = np.float32 if dtype is None else dtype
        else:
            data = np.asarray(array_or_shape)
            shape = data.shape
            dtype = data.dtype if dtype is None else dtype
        buf = ShaderBuffer(self.device, self._opt, shape, host_dtype_of(dtype), f"buffer {self._made}", self)
        self._made += 1
        self._buffers.add(buf)
        try:
            buf.write(np.zeros(buf.size, buf.dtype) if data is None else data)
        except BaseException:
            buf.release()
            raise
        return buf

    # -- running ------------------------------------------------------------------------------
    def dispatch(self, buffers, push_constants=(), *, global_size=None, groups=None) -> None:
        """Run the shader once now over `global_size` invocations (or `groups` workgroups)."""
        call = self._check_call("dispatch()", buffers, push_constants, global_size, groups)
        lifetime.run_deferred()
        cmd = self._build([call])
        try:
            cmd.submit_and_wait()
        finally:
            cmd.release()

    def record(self, buffers, push_constants=(), *, global_size=None, groups=None) -> None:
        """Append a dispatch to the program's sequence (push constants fixed now); replay() runs it."""
        call = self._check_call("record()", buffers, push_constants, global_size, groups)
        self._drop_recording()
        self._sequence.append(call)

    def replay(self, n: int = 1) -> None:
        """Run the recorded sequence n times: the same command buffer submitted again, nothing
        uploaded (buffers hold what the last dispatch or write() left there)."""
        self._check_open("replay()")
        n = self._count(n, "replay(n)", 0)
        if not self._sequence:
            raise ArgumentError(f"{self.name}: replay() with nothing recorded: call record() first")
        lifetime.run_deferred()
        if self._recording is None:
            self._recording = self._build(self._sequence)
        for _ in range(n):
            self._recording.replay()

    def clear(self) -> None:
        """Forget the recorded sequence."""
        self._drop_recording()
        self._sequence.clear()

    def time(self, buffers=None, push_constants=(), *, global_size=None, groups=None, n: int = 100,
             warmup: int = 10) -> ShaderTiming:
        """GPU time of one dispatch (given as to dispatch()), or of the recorded sequence when
        no buffers are given: warmup runs, then n timed runs. Buffers the shader writes change
        as they would in warmup + n dispatches."""
        self._check_open("time()")
        n = self._count(n, "time(n)", 1)
        warmup = self._count(warmup, "time(warmup)", 0)
        if buffers is None:
            if global_size is not None or groups is not None or len(push_constants):
                raise ArgumentError(f"{self.name}: time() got a work size or push constants but no buffers")
            if not self._sequence:
                raise ArgumentError(f"{self.name}: time() with no buffers times the recorded sequence, "
                                    "which is empty: record() first, or pass the dispatch's arguments")
            sequence = list(self._sequence)
        else:
            sequence = [self._check_call("time()", buffers, push_constants, global_size, groups)]
        lifetime.run_deferred()
        timer = LayerTimer(self.device, len(sequence) + 1)
        cmd = None
        try:
            cmd = self._build(sequence, timer)
            for _ in range(warmup):
                cmd.replay()
            result = ShaderTiming(runs=n, dispatches=len(sequence), per_dispatch_us=[[] for _ in sequence])
            for _ in range(n):
                start = time.perf_counter()
                cmd.replay()
                result.wall_us.append((time.perf_counter() - start) * 1e6)
                spans = [us for _label, us in timer.durations()]
                for times, us in zip(result.per_dispatch_us, spans):
                    times.append(us)
                result.gpu_us.append(sum(spans))
        finally:
            if cmd is not None:
                cmd.release()
            timer.destroy()
        if not all(np.isfinite(result.gpu_us)) or min(result.gpu_us) < 0:
            raise GpuError(f"'{self.device.info.device_name()}' gave unusable GPU timestamps")
        return result

    def _build(self, sequence: list, timer=None) -> VkCompute:
        cmd = VkCompute(self.device)
        try:
            if timer is not None:
                timer.start(cmd)
            for k, call in enumerate(sequence):
                cmd.record_pipeline(self._pipeline, [b.vkmat for b in call.buffers], call.push_constants,
                                    call.global_size)
                if timer is not None:
                    timer.mark(cmd, f"dispatch {k}")
        except BaseException:
            cmd.release()
            raise
        return cmd

    # -- checks -------------------------------------------------------------------------------
    def _check_open(self, what: str) -> None:
        if self._closed:
            raise GpuError(f"{getattr(self, 'name', 'ShaderProgram')}: {what} after close()")

    def _count(self, n, what: str, least: int) -> int:
        if not is_int(n):
            raise ArgumentTypeError(f"{self.name}: {what} must be an int, got {type(n).__name__} {n!r:.40}")
        if n < least:
            raise ArgumentError(f"{self.name}: {what} must be at least {least}, got {n}")
        return int(n)

    def _check_call(self, what: str, buffers, push_constants, global_size, groups) -> _Dispatch:
        self._check_open(what)
        where = f"{self.name}: {what}"
        if isinstance(buffers, ShaderBuffer) or not isinstance(buffers, (list, tuple)):
            raise ArgumentTypeError(f"{where}: buffers must be a list of ShaderBuffers, one per binding, "
                                    f"got {type(buffers).__name__}")
        roles = self._info.bindings
        if len(buffers) != len(roles):
            numbers = {0: "", 1: " (set 0, binding 0)"}.get(len(roles), f" (set 0, bindings 0..{len(roles) - 1})")
            raise ArgumentError(f"{where}: the shader has {len(roles)} binding(s){numbers}, "
                                f"got {len(buffers)} buffer(s)")
        for b, (buf, role) in enumerate(zip(buffers, roles)):
            if not isinstance(buf, ShaderBuffer):
                raise ArgumentTypeError(f"{where}: buffers[{b}] must be a ShaderBuffer from this program's "
                                        f"buffer(), got {type(buf).__name__}")
            if buf.program is not self:
                raise ArgumentError(f"{where}: buffers[{b}] ({buf.name}) belongs to another ShaderProgram")
            if buf.closed:
                raise ArgumentError(f"{where}: buffers[{b}] ({buf.name}) was released")
            if buf.nbytes < role.min_size:
                raise ArgumentError(f"{where}: binding {b} needs at least {role.min_size} bytes (its block's "
                                    f"fixed members), buffers[{b}] holds {buf.nbytes}")
        constants = list(push_constants)
        declared = self._info.push_constants
        if len(constants) != len(declared):
            raise ArgumentError(f"{where}: the shader's push-constant block has {len(declared)} scalar(s) "
                                f"({self._info.push_constant_size} bytes), got {len(constants)} push constant(s)")
        try:
            self._pipeline.encode_push_constants(constants)
        except GpuError as e:
            raise ArgumentTypeError(f"{where}: push constants: {e}") from None
        return _Dispatch(tuple(buffers), constants, self._global_size(where, global_size, groups))

    def _global_size(self, where: str, global_size, groups) -> tuple:
        if (global_size is None) == (groups is None):
            raise ArgumentError(f"{where}: give global_size (invocations) or groups (workgroups): one of them")
        local = self.local_size
        if groups is None:
            size = int_triple(global_size, f"{where}: global_size")
            counts = tuple(-(-s // ls) for s, ls in zip(size, local))
        else:
            counts = int_triple(groups, f"{where}: groups")
            size = tuple(g * ls for g, ls in zip(counts, local))
        limit = tuple(self.device.info.max_workgroup_count())
        if any(c > m for c, m in zip(counts, limit)):
            raise ArgumentError(f"{where}: {counts} workgroups of {local} exceed the device's limit {limit}; "
                                "use a larger local size or split the work")
        return size

    # -- lifetime -----------------------------------------------------------------------------
    def _drop_recording(self) -> None:
        recording, self._recording = self._recording, None
        if recording is not None:
            recording.release()

    def close(self) -> None:
        """Free the recordings, every buffer and their device memory. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        lifetime.run_deferred()  # buffers dropped earlier give their memory back first
        self._drop_recording()
        self._sequence.clear()
        for buf in list(self._buffers):
            buf.release()
        self._blob.clear()
        self._staging.clear()
        self.device.release_ref()

    def __enter__(self) -> ShaderProgram:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            try:  # queued, not run: no locks in a finalizer (vulkan/lifetime.py)
                lifetime.defer(self.close)
            except Exception:  # modules already torn down at interpreter exit
                pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._buffers)} buffer(s), {len(self._sequence)} recorded"
        return (f"<ShaderProgram {self.name!r} local_size={self.local_size} bindings={self.binding_count} "
                f"push_constants={self.push_constant_count}{' fp16' if self.fp16 else ''}: {state}>")
