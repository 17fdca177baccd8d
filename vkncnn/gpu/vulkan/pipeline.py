"""Pipeline: one compute shader made ready to dispatch (ncnn's Pipeline).

    p = Pipeline(vkdev)
    p.set_optimal_local_size_xyz(64, 1, 1)       # or set_local_size_xyz(x, y, z)
    p.create("relu", opt, [slope])               # built-in name, or SPIR-V bytes

The local size enters the shader through specialization constants 233/234/235
(`layout (local_size_x_id = 233, ...) in;`), so one SPIR-V serves every local size.
A shader that fixes its local size in GLSL keeps it, and the Pipeline reports that one
(the recorder divides the global size by it). Binding count, buffer roles and the
push-constant size are read from the SPIR-V (spirv_reflect.py).

Shader modules and pipelines are cached in the VulkanDevice, keyed by SPIR-V hash,
specialization values and local size: layers that ask for the same thing share it,
and the device destroys them all at teardown.
"""

from __future__ import annotations

import hashlib
import struct
from types import SimpleNamespace

import numpy as np

from ...errors import GpuError
from ..compiler.registry import builtin_variant, get_builtin_spirv
from ..compiler.spirv_reflect import LOCAL_SIZE_SPEC_IDS, ShaderInfo, reflect
from . import device_limits
from .vk import check, vk


def _pow2_floor(n: int) -> int:
    return 1 << (max(int(n), 1).bit_length() - 1)


class PipelineObjects:
    """The Vulkan objects of one cached pipeline (owned by the device)."""

    def __init__(self, descriptor_set_layout, pipeline_layout, pipeline) -> None:
        self.descriptor_set_layout = descriptor_set_layout
        self.pipeline_layout = pipeline_layout
        self.pipeline = pipeline

    def destroy(self, device) -> None:
        ffi, lib = vk.ffi, vk.lib
        lib.vkDestroyPipeline(device, self.pipeline, ffi.NULL)
        lib.vkDestroyPipelineLayout(device, self.pipeline_layout, ffi.NULL)
        lib.vkDestroyDescriptorSetLayout(device, self.descriptor_set_layout, ffi.NULL)


def encode_constant(value, kind: str | None = None) -> bytes:
    """One 32-bit push/specialization constant, as the shader declares it (kind 'i', 'u', 'f').

    Without a kind (the shader did not say): ints as int32, floats as float32.
    """
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise GpuError(f"shader constants are int or float, got {type(value).__name__} {value!r}")
    if kind is None:
        kind = "f" if isinstance(value, (float, np.floating)) else "i"
    if kind == "f":
        return struct.pack("<f", float(value))
    if isinstance(value, (float, np.floating)):
        if not float(value).is_integer():
            raise GpuError(f"constant {value} passed for an integer shader constant")
        value = int(value)
    value = int(value)
    if -(2**31) <= value < 2**31:
        return struct.pack("<i", value)
    if 0 <= value < 2**32:
        return struct.pack("<I", value)
    raise GpuError(f"constant {value} does not fit in 32 bits")


def optimal_local_size(vkdev, w: int = 4, h: int = 4, c: int = 4) -> tuple:
    """Pipeline.set_optimal_local_size_xyz's choice for a dispatch of extent (w, h, c)."""
    info = vkdev.info
    max_xyz = info.max_workgroup_size()
    sizes = [min(_pow2_floor(e if e > 0 else 4), _pow2_floor(m)) for e, m in zip((w, h, c), max_xyz)]
    cap = min(256, info.max_workgroup_invocations())
    while sizes[0] * sizes[1] * sizes[2] > cap:
        k = sizes.index(max(sizes))
        sizes[k] //= 2
    return tuple(sizes)


class Pipeline:
    """A compute pipeline with its descriptor-set layout and pipeline layout."""

    def __init__(self, vkdev) -> None:
        self.vkdev = vkdev
        self.local_size_x = self.local_size_y = self.local_size_z = 4
        self.shader_info: ShaderInfo | None = None
        self._objects: PipelineObjects | None = None
        self.name = "shader"
        # the built-in variant's key ("fp16a;PACK4=1"), "" for SPIR-V handed in as bytes
        self.variant = ""

    # -- local size -------------------------------------------------------------------------
    def set_optimal_local_size_xyz(self, w: int = 4, h: int = 4, c: int = 4) -> None:
        """A local size for a dispatch of extent (w, h, c); <= 0 means unknown (4).

        Each axis gets the largest power of two not above its extent (threads beyond the
        extent would idle), clamped to the device's per-axis limits; then the largest axis
        is halved until the group has at most 256 invocations (and the device's maximum):
        big enough to fill a SIMD unit, small enough to keep many groups in flight.
        """
        self.local_size_x, self.local_size_y, self.local_size_z = optimal_local_size(self.vkdev, w, h, c)

    def set_local_size_xyz(self, x: int, y: int, z: int) -> None:
        info = self.vkdev.info
        mx = info.max_workgroup_size()
        if min(x, y, z) < 1 or x > mx[0] or y > mx[1] or z > mx[2] or x * y * z > info.max_workgroup_invocations():
            raise device_limits.limit_exceeded(f"local size {(x, y, z)} exceeds the device limits {mx} / "
                                               f"{info.max_workgroup_invocations()} invocations")
        self.local_size_x, self.local_size_y, self.local_size_z = int(x), int(y), int(z)

    @property
    def local_size(self) -> tuple:
        return (self.local_size_x, self.local_size_y, self.local_size_z)

    # -- creation ---------------------------------------------------------------------------
    def create(self, shader, opt=None, specializations=(), defines: dict | None = None) -> int:
        """Build from a built-in shader name or SPIR-V bytes; specializations fill ids 0..n-1.

        defines: extra macros for a built-in shader's variant (e.g. {"PACK4": 1}).
        """
        vkdev = self.vkdev
        vkdev.check_alive("Pipeline.create")
        if isinstance(shader, str):
            self.name = shader
            spirv = get_builtin_spirv(shader, opt, vkdev, defines)
            self.variant = builtin_variant(shader, opt, vkdev, defines).key
        elif isinstance(shader, (bytes, bytearray, memoryview)):
            spirv = bytes(shader)
        else:
            raise GpuError(f"Pipeline.create: shader must be a built-in name or SPIR-V bytes, "
                           f"got {type(shader).__name__}")
        sha = hashlib.sha256(spirv).digest()
        with vkdev.cache_lock:
            module, info = self._shader_module(sha, spirv)
            spec_data = b"".join(encode_constant(v, info.spec_kinds.get(k)) for k, v in enumerate(specializations))
            if not info.local_size_from_spec:  # the shader fixed its local size: that is the truth
                self.local_size_x, self.local_size_y, self.local_size_z = info.local_size
            # the guard: never hand the driver a shader the device (or its profile) cannot run
            device_limits.check_pipeline(vkdev, info, self.local_size, self.name)
            key = (sha, spec_data, self.local_size)
            objects = vkdev.pipeline_cache.get(key)
            if objects is None:
                objects = self._build(module, info, spec_data, len(specializations))
                vkdev.pipeline_cache[key] = objects
        self.shader_info = info
        self._objects = objects
        return 0

    def _shader_module(self, sha: bytes, spirv: bytes):
        vkdev = self.vkdev
        cached = vkdev.shader_modules.get(sha)
        if cached is not None:
            return cached
        info = reflect(spirv)
        ffi, lib = vk.ffi, vk.lib
        code = ffi.new("char[]", spirv)
        create_info = ffi.new("VkShaderModuleCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, "codeSize": len(spirv),
            "pCode": ffi.cast("uint32_t*", code)})
        out = ffi.new("VkShaderModule*")
        check(lib.vkCreateShaderModule(vkdev.handle, create_info, ffi.NULL, out),
              f"vkCreateShaderModule ({self.name})")
        vkdev.shader_modules[sha] = (out[0], info)
        return out[0], info

    def _build(self, module, info: ShaderInfo, spec_data: bytes, spec_count: int) -> PipelineObjects:
        ffi, lib = vk.ffi, vk.lib
        dev = self.vkdev.handle
        n = info.binding_count
        layout_bindings = ffi.new("VkDescriptorSetLayoutBinding[]", max(n, 1))
        for b, binding in enumerate(info.bindings):
            layout_bindings[b].binding = b
            layout_bindings[b].descriptorType = (vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER if binding.storage
                                                 else vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)
            layout_bindings[b].descriptorCount = 1
            layout_bindings[b].stageFlags = vk.VK_SHADER_STAGE_COMPUTE_BIT
        dsl_info = ffi.new("VkDescriptorSetLayoutCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            "bindingCount": n, "pBindings": layout_bindings})
        dsl = ffi.new("VkDescriptorSetLayout*")
        check(lib.vkCreateDescriptorSetLayout(dev, dsl_info, ffi.NULL, dsl), "vkCreateDescriptorSetLayout")

        push_range = ffi.new("VkPushConstantRange*", {
            "stageFlags": vk.VK_SHADER_STAGE_COMPUTE_BIT, "offset": 0, "size": info.push_constant_size})
        set_layouts = ffi.new("VkDescriptorSetLayout[]", [dsl[0]])
        layout_info = ffi.new("VkPipelineLayoutCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
            "setLayoutCount": 1, "pSetLayouts": set_layouts,
            "pushConstantRangeCount": 1 if info.push_constant_size else 0,
            "pPushConstantRanges": push_range if info.push_constant_size else ffi.NULL})
        layout = ffi.new("VkPipelineLayout*")
        check(lib.vkCreatePipelineLayout(dev, layout_info, ffi.NULL, layout), "vkCreatePipelineLayout")

        # specialization: ids 0..n-1 = the layer's values, then 233/234/235 = local size
        data = spec_data + struct.pack("<3I", *self.local_size)
        ids = list(range(spec_count)) + list(LOCAL_SIZE_SPEC_IDS)
        entries = ffi.new("VkSpecializationMapEntry[]", len(ids))
        for k, constant_id in enumerate(ids):
            entries[k].constantID = constant_id
            entries[k].offset = 4 * k
            entries[k].size = 4
        data_buf = ffi.new("char[]", data)
        spec = ffi.new("VkSpecializationInfo*", {
            "mapEntryCount": len(ids), "pMapEntries": entries, "dataSize": len(data), "pData": data_buf})
        entry_name = ffi.new("char[]", b"main")
        create_info = ffi.new("VkComputePipelineCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            "stage": {"sType": vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      "stage": vk.VK_SHADER_STAGE_COMPUTE_BIT, "module": module, "pName": entry_name,
                      "pSpecializationInfo": spec},
            "layout": layout[0]})
        pipeline = ffi.new("VkPipeline*")
        disk_cache = self.vkdev.vk_pipeline_cache()
        result = lib.vkCreateComputePipelines(dev, disk_cache.handle, 1, create_info, ffi.NULL, pipeline)
        disk_cache.pipeline_created()
        if result != 0:
            lib.vkDestroyPipelineLayout(dev, layout[0], ffi.NULL)
            lib.vkDestroyDescriptorSetLayout(dev, dsl[0], ffi.NULL)
            check(result, f"vkCreateComputePipelines ({self.name})")
        return PipelineObjects(dsl[0], layout[0], pipeline[0])

    # -- accessors --------------------------------------------------------------------------
    def _require(self) -> PipelineObjects:
        if self._objects is None:
            raise GpuError(f"Pipeline '{self.name}' used before create()")
        if self.vkdev.destroyed:
            raise GpuError(f"Pipeline '{self.name}': its device was destroyed")
        return self._objects

    @property
    def pipeline(self):
        return self._require().pipeline

    @property
    def pipeline_layout(self):
        return self._require().pipeline_layout

    @property
    def descriptor_set_layout(self):
        return self._require().descriptor_set_layout

    @property
    def binding_count(self) -> int:
        return self.shader_info.binding_count if self.shader_info else 0

    @property
    def push_constant_size(self) -> int:
        return self.shader_info.push_constant_size if self.shader_info else 0

    def encode_push_constants(self, constants) -> bytes:
        """The push-constant bytes for `constants`, typed by the shader's block."""
        layout = self.shader_info.push_constants
        if len(constants) != len(layout):
            raise GpuError(f"shader '{self.name}' declares {len(layout)} push constants, got {len(constants)}")
        data = bytearray(self.shader_info.push_constant_size)
        for value, (offset, kind) in zip(constants, layout):
            data[offset:offset + 4] = encode_constant(value, kind)
        return bytes(data)

    def destroy(self) -> None:
        """Forget the pipeline (the device keeps the cached Vulkan objects for others)."""
        self._objects = None
        self.shader_info = None

    def __repr__(self) -> str:
        state = "created" if self._objects else "not created"
        return f"<Pipeline '{self.name}' local_size={self.local_size} {state}>"


# -- built-in pipelines shared device-wide ------------------------------------------------------
_ROW = 65536  # invocations per row of the 2-D dispatch grid (a multiple of the local size)


def shader_pipeline(vkdev, shader, fp16: bool, specializations=(), local_size: tuple = (64, 1, 1),
                    defines: dict | None = None, fp16_arithmetic: bool = False) -> Pipeline:
    """The pipeline of `shader` (a built-in name, or SPIR-V bytes) for one precision,
    specialization values, local size and variant macros: the way the runtime makes every
    pipeline. Made once per device and shared by every layer and recorder that asks for the
    same thing; the device destroys them at teardown.

    The storage precision comes from the tensors (their scalar size), not from an Option: the
    same layer may see fp32 and fp16 tensors from extractors with different options.
    fp16_arithmetic (dispatch_options.arithmetic_fp16: the Option asks, fp16 storage) is
    honoured where the device has shaderFloat16 and the shader ships such a variant; elsewhere
    the pipeline computes in fp32.
    """
    precision = SimpleNamespace(use_fp16_storage=bool(fp16), use_fp16_arithmetic=bool(fp16 and fp16_arithmetic))
    variant = builtin_variant(shader, precision, vkdev, defines).key if isinstance(shader, str) else ""
    key = (shader, variant or bool(fp16), tuple(sorted((defines or {}).items())), tuple(specializations),
           tuple(local_size))
    with vkdev.cache_lock:
        pipeline = vkdev.shared_pipelines.get(key)
        if pipeline is None:
            _check_builtin_kernel(vkdev, shader, precision, local_size, defines)
            pipeline = Pipeline(vkdev)
            pipeline.set_local_size_xyz(*local_size)
            pipeline.create(shader, precision, list(specializations), defines=defines)
            vkdev.shared_pipelines[key] = pipeline
        return pipeline


def _check_builtin_kernel(vkdev, shader, precision, local_size: tuple, defines) -> None:
    """KernelUnsupported when this kernel does not fit the device: the layer that chose it
    then runs on the CPU (planner.py) instead of tripping the pipeline guard."""
    spirv = (get_builtin_spirv(shader, precision, vkdev, defines)
             if isinstance(shader, str) else bytes(shader))
    info = reflect(spirv)
    size = tuple(local_size) if info.local_size_from_spec else info.local_size
    device_limits.check_kernel(vkdev, info, size, shader if isinstance(shader, str) else "shader")


def workgroup_cap(vkdev, wanted: int = 256) -> int:
    """The largest power of two <= `wanted` invocations that the device allows along x and in
    total: the kernels tuned for 256-invocation workgroups shrink to it on devices (and device
    profiles) with fewer, e.g. the 128 every Vulkan device guarantees."""
    info = vkdev.info
    return _pow2_floor(min(int(wanted), info.max_workgroup_invocations(), info.max_workgroup_size()[0]))


def flat_grid(total: int) -> tuple:
    """Global size for `total` invocations read as a flat index (row = _ROW invocations)."""
    if total <= _ROW:
        return (total, 1, 1)
    return (_ROW, -(-total // _ROW), 1)
