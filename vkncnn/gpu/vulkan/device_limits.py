"""Does a shader fit the device? The checks behind every pipeline and dispatch.

Vulkan leaves a shader that asks for more than the device offers (more storage buffers
than maxPerStageDescriptorStorageBuffers, a Float16 capability without shaderFloat16, a
workgroup larger than maxComputeWorkGroupInvocations ...) undefined: some drivers crash,
some compute garbage. vkncnn checks first, against the device's GpuInfo, which
VKNCNN_DEVICE_PROFILE may have clamped to a weaker device class (device_profile.py):

* `shader_problems` lists what a reflected shader needs and the device lacks;
* `shader_pipeline` (pipeline.py), the funnel every built-in kernel goes through, raises
  `KernelUnsupported` for such a kernel: the planner then runs that layer on the CPU
  (a planned fallback, like a layer without a shader);
* anything else that would exceed a limit (a pipeline made another way, a dispatch too large
  for maxComputeWorkGroupCount, a tensor beyond maxStorageBufferRange) raises
  `DeviceLimitExceeded` and is recorded in `exceeded()`, which the tests keep empty.
"""

from __future__ import annotations

import threading

from ...errors import GpuError

# SPIR-V capability -> (what the device must have, how it is asked of GpuInfo)
_CAP_INT64, _CAP_INT16, _CAP_FLOAT16, _CAP_INT8 = 11, 22, 9, 39
_CAP_GROUP_NON_UNIFORM = {61: 0x1, 62: 0x2, 63: 0x4, 64: 0x8, 65: 0x10, 66: 0x20, 67: 0x40, 68: 0x80}
_CAP_SB16, _CAP_UB16 = 4433, 4434
_CAP_SB8, _CAP_UB8 = 4448, 4449
_CAP_VULKAN_MEMORY_MODEL, _CAP_COOPMAT_KHR = 5345, 6022
_SUBGROUP_OP_NAMES = {0x1: "basic", 0x2: "vote", 0x4: "arithmetic", 0x8: "ballot", 0x10: "shuffle",
                      0x20: "shuffle_relative", 0x40: "clustered", 0x80: "quad"}


class DeviceLimitExceeded(GpuError):
    """A pipeline or dispatch would ask more of the device than it reports."""


class KernelUnsupported(DeviceLimitExceeded):
    """A built-in kernel the device cannot run; the layer that chose it runs on the CPU."""


_lock = threading.Lock()
_exceeded: list[str] = []


def exceeded() -> list[str]:
    """Every DeviceLimitExceeded raised in this process (the kernel fallbacks are not in it)."""
    with _lock:
        return list(_exceeded)


def clear_exceeded() -> None:
    with _lock:
        _exceeded.clear()


def limit_exceeded(message: str) -> DeviceLimitExceeded:
    """The error to raise, recorded first so that a test sees it even when a caller catches it."""
    with _lock:
        _exceeded.append(message)
    return DeviceLimitExceeded(message)


def _device_label(info) -> str:
    profile = info.device_profile()
    return f"'{info.device_name()}'" + (f" (device profile {profile.name})" if profile is not None else "")


def min_api_for_spirv(version: tuple) -> int:
    """The Vulkan version that consumes SPIR-V `version`: 1.0 -> 1.0, up to 1.3 -> 1.1,
    1.4 -> 1.1 with VK_KHR_spirv_1_4 (taken as 1.2 here), 1.5 -> 1.2, 1.6 -> 1.3."""
    minor = {0: 0, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3}.get(version[1], 3) if version[0] == 1 else 3
    return (1 << 22) | (minor << 12)


def shader_problems(info, shader, local_size: tuple) -> list[str]:
    """What `shader` (a ShaderInfo) run with `local_size` needs beyond what GpuInfo `info` reports."""
    out = []
    if info.api_version() < min_api_for_spirv(shader.spirv_version):
        need = min_api_for_spirv(shader.spirv_version)
        out.append(f"SPIR-V {shader.spirv_version[0]}.{shader.spirv_version[1]} needs Vulkan "
                   f"{need >> 22}.{(need >> 12) & 0x3FF}")
    storage = sum(1 for b in shader.bindings if b.storage)
    if storage > info.max_per_stage_storage_buffers():
        out.append(f"{storage} storage buffers > maxPerStageDescriptorStorageBuffers "
                   f"{info.max_per_stage_storage_buffers()}")
    if shader.push_constant_size > info.max_push_constants_size():
        out.append(f"{shader.push_constant_size} bytes of push constants > maxPushConstantsSize "
                   f"{info.max_push_constants_size()}")
    if shader.shared_memory_size > info.max_shared_memory_size():
        out.append(f"{shader.shared_memory_size} bytes of shared memory > maxComputeSharedMemorySize "
                   f"{info.max_shared_memory_size()}")
    mx = info.max_workgroup_size()
    x, y, z = local_size
    if x > mx[0] or y > mx[1] or z > mx[2] or x * y * z > info.max_workgroup_invocations():
        out.append(f"local size {tuple(local_size)} > maxComputeWorkGroupSize {tuple(mx)} / "
                   f"maxComputeWorkGroupInvocations {info.max_workgroup_invocations()}")
    out += _capability_problems(info, shader.capabilities)
    return out


def _capability_problems(info, caps: set) -> list[str]:
    out = []
    needs = [(_CAP_SB16, info.support_fp16_storage, "storageBuffer16BitAccess"),
             (_CAP_UB16, info.support_fp16_uniform, "uniformAndStorageBuffer16BitAccess"),
             (_CAP_FLOAT16, info.support_fp16_arithmetic, "shaderFloat16"),
             (_CAP_SB8, info.support_int8_storage, "storageBuffer8BitAccess"),
             (_CAP_UB8, info.support_int8_uniform, "uniformAndStorageBuffer8BitAccess"),
             (_CAP_INT8, info.support_int8_arithmetic, "shaderInt8"),
             (_CAP_INT16, info.support_int16_arithmetic, "shaderInt16"),
             (_CAP_INT64, info.support_int64_arithmetic, "shaderInt64"),
             (_CAP_COOPMAT_KHR, info.support_cooperative_matrix, "cooperativeMatrix"),
             (_CAP_VULKAN_MEMORY_MODEL, info.support_vulkan_memory_model, "vulkanMemoryModel")]
    for cap, probe, name in needs:
        if cap in caps and not probe():
            out.append(f"the shader uses {name}, which the device does not report")
    wanted = 0
    for cap, bit in _CAP_GROUP_NON_UNIFORM.items():
        if cap in caps:
            wanted |= bit
    if wanted:
        have = info.subgroup_ops() if info.support_subgroup_ops() else 0
        missing = wanted & ~have
        if missing:
            names = [n for bit, n in _SUBGROUP_OP_NAMES.items() if missing & bit]
            out.append(f"subgroup operations {', '.join(names)} in compute shaders, which the device does not report")
    return out


def check_kernel(vkdev, shader, local_size: tuple, name: str) -> None:
    """KernelUnsupported when a built-in kernel does not fit (the planner falls back)."""
    problems = shader_problems(vkdev.info, shader, local_size)
    if problems:
        raise KernelUnsupported(f"shader '{name}' cannot run on {_device_label(vkdev.info)}: "
                                + "; ".join(problems))


def check_pipeline(vkdev, shader, local_size: tuple, name: str) -> None:
    """The guard at pipeline creation: DeviceLimitExceeded (recorded) when it does not fit."""
    problems = shader_problems(vkdev.info, shader, local_size)
    if problems:
        raise limit_exceeded(f"shader '{name}' exceeds what {_device_label(vkdev.info)} reports: "
                             + "; ".join(problems))


def check_dispatch(info, name: str, groups: tuple, size: tuple) -> None:
    limit = info.max_workgroup_count()
    if any(g > m for g, m in zip(groups, limit)):
        raise limit_exceeded(f"shader '{name}': {groups} workgroups for global size {size} exceed "
                             f"maxComputeWorkGroupCount {tuple(limit)} of {_device_label(info)}; "
                             "use a larger local size or split the work")


def check_binding(info, name: str, nbytes: int, offset: int) -> None:
    limit = info.max_storage_buffer_range()
    if nbytes > limit:
        raise limit_exceeded(f"shader '{name}': a {nbytes}-byte tensor exceeds maxStorageBufferRange "
                             f"({limit} bytes) of {_device_label(info)}")
    align = info.min_storage_buffer_offset_alignment()
    if align and offset % align:
        raise limit_exceeded(f"shader '{name}': a buffer bound at offset {offset}, not a multiple of "
                             f"minStorageBufferOffsetAlignment {align} of {_device_label(info)}")
