"""GpuInfo: what one physical device is and can do, read once when the instance starts.

The accessors are methods, as in ncnn and pyncnn (`info.device_name()`), so scripts
written for pyncnn run unchanged. Feature bits come from vkGetPhysicalDeviceFeatures2
with the 16-bit / 8-bit storage and float16 arithmetic structs chained in; a struct is
chained only when the device's API version or an extension says it knows it, so the
validation layer has nothing to complain about.
"""

from __future__ import annotations

from .vk import version_string, vk

# ncnn's device types; index 0 after sorting is the best device.
TYPE_DISCRETE, TYPE_INTEGRATED, TYPE_VIRTUAL, TYPE_CPU = 0, 1, 2, 3
_TYPE_NAMES = {0: "discrete", 1: "integrated", 2: "virtual", 3: "cpu"}

_API_1_1 = (1 << 22) | (1 << 12)
_API_1_2 = (1 << 22) | (2 << 12)


def _vk_type_to_ncnn(vk_type: int) -> int:
    return {vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: TYPE_DISCRETE,
            vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: TYPE_INTEGRATED,
            vk.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: TYPE_VIRTUAL}.get(vk_type, TYPE_CPU)


class GpuInfo:
    """Read-only facts about one physical device (ncnn's GpuInfo)."""

    def __init__(self, physical_device, instance_api_version: int, instance_handle=None) -> None:
        ffi, lib = vk.ffi, vk.lib
        self.physical_device = physical_device
        self._extensions = _device_extensions(physical_device)

        props = ffi.new("VkPhysicalDeviceProperties*")
        lib.vkGetPhysicalDeviceProperties(physical_device, props)
        self._api_version = props.apiVersion
        self._driver_version = props.driverVersion
        self._vendor_id = props.vendorID
        self._device_id = props.deviceID
        self._name = ffi.string(props.deviceName).decode("utf-8", "replace")
        self._type = _vk_type_to_ncnn(props.deviceType)
        self._uuid = bytes(props.pipelineCacheUUID)
        lim = props.limits
        self._max_workgroup_size = tuple(lim.maxComputeWorkGroupSize)
        self._max_workgroup_count = tuple(lim.maxComputeWorkGroupCount)
        self._max_workgroup_invocations = lim.maxComputeWorkGroupInvocations
        self._max_shared_memory_size = lim.maxComputeSharedMemorySize
        self._max_push_constants_size = lim.maxPushConstantsSize
        self._max_storage_buffers_per_stage = lim.maxPerStageDescriptorStorageBuffers
        self._max_storage_buffer_range = lim.maxStorageBufferRange
        self._min_storage_buffer_offset_alignment = lim.minStorageBufferOffsetAlignment
        self._non_coherent_atom_size = lim.nonCoherentAtomSize
        self._max_memory_allocation_count = lim.maxMemoryAllocationCount
        self._timestamp_period = lim.timestampPeriod

        self._fp16_storage = self._fp16_uniform = self._fp16_arithmetic = False
        self._int8_storage = self._int8_uniform = self._int8_arithmetic = False
        self._subgroup_size, self._subgroup_ops, self._subgroup_stages = 0, 0, 0
        self._max_memory_allocation_size = 0
        self._driver_name = ""
        self._coopmat_feature = self._memory_model = False
        self._coopmat_shapes: frozenset = frozenset()
        features10 = _features_1_0(physical_device)
        self._int16 = bool(features10.shaderInt16)
        self._int64 = bool(features10.shaderInt64)
        self._profile = None  # the DeviceProfile this info was clamped to (device_profile.py)
        # The *2 queries and their structs need Vulkan 1.1 on both the instance and the device.
        if instance_api_version >= _API_1_1 and self._api_version >= _API_1_1:
            self._query_features2(physical_device)
            self._query_properties2(physical_device)
            if self._coopmat_feature and instance_handle is not None:
                self._coopmat_shapes = _cooperative_matrix_shapes(instance_handle, physical_device)

        self._memory_types, self._memory_heaps = _memory_properties(physical_device)
        self._queue_families = _queue_families(physical_device)
        self._compute_queue_family = next(
            (i for i, (flags, _n) in enumerate(self._queue_families) if flags & vk.VK_QUEUE_COMPUTE_BIT), -1)

    # -- queries ----------------------------------------------------------------------------
    def _knows(self, core_version: int, extension: str) -> bool:
        return self._api_version >= core_version or extension in self._extensions

    def _query_features2(self, pd) -> None:
        ffi, lib = vk.ffi, vk.lib
        chain = []
        s16 = ffi.new("VkPhysicalDevice16BitStorageFeatures*",
                      {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES})
        chain.append(s16)
        s8 = f16 = None
        if self._knows(_API_1_2, "VK_KHR_8bit_storage"):
            s8 = ffi.new("VkPhysicalDevice8BitStorageFeatures*",
                         {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES})
            chain.append(s8)
        if self._knows(_API_1_2, "VK_KHR_shader_float16_int8"):
            f16 = ffi.new("VkPhysicalDeviceShaderFloat16Int8Features*",
                          {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES})
            chain.append(f16)
        coopmat = memory_model = None
        if "VK_KHR_cooperative_matrix" in self._extensions:
            coopmat = ffi.new("VkPhysicalDeviceCooperativeMatrixFeaturesKHR*",
                              {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR})
            chain.append(coopmat)
        if self._knows(_API_1_2, "VK_KHR_vulkan_memory_model"):
            memory_model = ffi.new("VkPhysicalDeviceVulkanMemoryModelFeatures*",
                                   {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES})
            chain.append(memory_model)
        features2 = ffi.new("VkPhysicalDeviceFeatures2*",
                            {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2})
        _link(features2, chain)
        lib.vkGetPhysicalDeviceFeatures2(pd, features2)
        self._fp16_storage = bool(s16.storageBuffer16BitAccess)
        self._fp16_uniform = bool(s16.uniformAndStorageBuffer16BitAccess)
        if s8 is not None:
            self._int8_storage = bool(s8.storageBuffer8BitAccess)
            self._int8_uniform = bool(s8.uniformAndStorageBuffer8BitAccess)
        if f16 is not None:
            self._fp16_arithmetic = bool(f16.shaderFloat16)
            self._int8_arithmetic = bool(f16.shaderInt8)
        if memory_model is not None:
            self._memory_model = bool(memory_model.vulkanMemoryModel)
        if coopmat is not None:
            self._coopmat_feature = bool(coopmat.cooperativeMatrix)

    def _query_properties2(self, pd) -> None:
        ffi, lib = vk.ffi, vk.lib
        subgroup = ffi.new("VkPhysicalDeviceSubgroupProperties*",
                           {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES})
        maint3 = ffi.new("VkPhysicalDeviceMaintenance3Properties*",
                         {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES})
        chain = [subgroup, maint3]
        driver = None
        if self._knows(_API_1_2, "VK_KHR_driver_properties"):
            driver = ffi.new("VkPhysicalDeviceDriverProperties*",
                             {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES})
            chain.append(driver)
        props2 = ffi.new("VkPhysicalDeviceProperties2*",
                         {"sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2})
        _link(props2, chain)
        lib.vkGetPhysicalDeviceProperties2(pd, props2)
        self._subgroup_size = subgroup.subgroupSize
        self._subgroup_ops = subgroup.supportedOperations
        self._subgroup_stages = subgroup.supportedStages
        self._max_memory_allocation_size = maint3.maxMemoryAllocationSize
        if driver is not None:
            self._driver_name = ffi.string(driver.driverName).decode("utf-8", "replace")

    def __call__(self) -> GpuInfo:
        """`vkdev.info()`, as pyncnn spells it, gives this object; `vkdev.info.x()` too."""
        return self

    def clamp_to(self, profile, features: dict, limits: dict, alignments: dict) -> None:
        """Report no more than `profile` (a device_profile.DeviceProfile) grants: limits min'ed
        (alignments max'ed), features and-ed. `features` / `limits` / `alignments` map the
        profile's Vulkan names to this object's fields (device_profile.py owns the tables)."""
        if profile.api_version is not None:
            self._api_version = min(self._api_version, profile.api_version)
        for key, attr in features.items():
            if key in profile.features:
                setattr(self, attr, bool(getattr(self, attr)) and profile.features[key])
        for key, attr in limits.items():
            if key not in profile.limits:
                continue
            mine, theirs = getattr(self, attr), profile.limits[key]
            if isinstance(mine, tuple):
                theirs = theirs if isinstance(theirs, tuple) else (theirs,) * len(mine)
                setattr(self, attr, tuple(min(a, b) for a, b in zip(mine, theirs)))
            else:
                # 0 means "the device did not say" (maxMemoryAllocationSize without Vulkan 1.1)
                setattr(self, attr, min(mine, theirs) if mine else theirs)
        for key, attr in alignments.items():
            if key in profile.limits:
                setattr(self, attr, max(getattr(self, attr), profile.limits[key]))
        if self._api_version < _API_1_1:
            self._subgroup_ops = self._subgroup_stages = 0  # subgroups are Vulkan 1.1
        if profile.subgroup_ops is not None:
            self._subgroup_ops &= profile.subgroup_ops
        if profile.subgroup_stages is not None:
            self._subgroup_stages &= profile.subgroup_stages
        if not (self._coopmat_feature and self._memory_model):
            self._coopmat_shapes = frozenset()
        self._profile = profile

    # -- identity ---------------------------------------------------------------------------
    def device_name(self) -> str:
        return self._name

    def type(self) -> int:
        """0 discrete, 1 integrated, 2 virtual, 3 cpu (ncnn's numbering)."""
        return self._type

    def type_name(self) -> str:
        return _TYPE_NAMES[self._type]

    def api_version(self) -> int:
        return self._api_version

    def driver_version(self) -> int:
        return self._driver_version

    def driver_name(self) -> str:
        return self._driver_name

    def vendor_id(self) -> int:
        return self._vendor_id

    def device_id(self) -> int:
        return self._device_id

    def pipeline_cache_uuid(self) -> bytes:
        return self._uuid

    # -- features ---------------------------------------------------------------------------
    def support_fp16_packed(self) -> bool:
        return True  # packHalf2x16 is core GLSL 4.20

    def support_fp16_storage(self) -> bool:
        return self._fp16_storage

    def support_fp16_uniform(self) -> bool:
        return self._fp16_uniform

    def support_fp16_arithmetic(self) -> bool:
        return self._fp16_arithmetic

    def support_int8_packed(self) -> bool:
        return True

    def support_int8_storage(self) -> bool:
        return self._int8_storage

    def support_int8_uniform(self) -> bool:
        return self._int8_uniform

    def support_int8_arithmetic(self) -> bool:
        return self._int8_arithmetic

    def support_int16_arithmetic(self) -> bool:
        return self._int16

    def support_int64_arithmetic(self) -> bool:
        return self._int64

    def support_subgroup_ops(self) -> bool:
        """Basic subgroup operations in compute shaders."""
        return bool(self._subgroup_stages & vk.VK_SHADER_STAGE_COMPUTE_BIT
                    and self._subgroup_ops & vk.VK_SUBGROUP_FEATURE_BASIC_BIT)

    def subgroup_ops(self) -> int:
        """VkSubgroupFeatureFlags bits (basic, vote, arithmetic, ballot, shuffle, ...)."""
        return self._subgroup_ops

    def subgroup_size(self) -> int:
        return self._subgroup_size

    def support_vulkan_memory_model(self) -> bool:
        return self._memory_model

    def support_cooperative_matrix(self) -> bool:
        """VK_KHR_cooperative_matrix usable from GLSL (glslang's KHR cooperative matrices
        also need the Vulkan memory model)."""
        return self._coopmat_feature and self._memory_model

    def cooperative_matrix_shapes(self) -> frozenset:
        """Subgroup-scope (M, N, K, A/B type, C/result type) the device multiplies natively,
        types as 'f16' / 'f32' / ... e.g. (16, 16, 16, 'f16', 'f32') on NVIDIA."""
        return self._coopmat_shapes

    def support_cooperative_matrix_16x16x16_fp16(self) -> bool:
        return self.support_cooperative_matrix() and (16, 16, 16, "f16", "f32") in self._coopmat_shapes

    def support_extension(self, name: str) -> bool:
        return name in self._extensions

    def extensions(self) -> frozenset:
        return self._extensions

    # -- limits -----------------------------------------------------------------------------
    def max_workgroup_size(self) -> tuple:
        return self._max_workgroup_size

    def max_workgroup_count(self) -> tuple:
        return self._max_workgroup_count

    def max_workgroup_invocations(self) -> int:
        return self._max_workgroup_invocations

    def max_shared_memory_size(self) -> int:
        return self._max_shared_memory_size

    def max_push_constants_size(self) -> int:
        return self._max_push_constants_size

    def max_per_stage_storage_buffers(self) -> int:
        """maxPerStageDescriptorStorageBuffers: storage buffers one compute shader may bind."""
        return self._max_storage_buffers_per_stage

    def max_storage_buffer_range(self) -> int:
        return self._max_storage_buffer_range

    def min_storage_buffer_offset_alignment(self) -> int:
        return self._min_storage_buffer_offset_alignment

    def non_coherent_atom_size(self) -> int:
        return self._non_coherent_atom_size

    def max_memory_allocation_size(self) -> int:
        """Largest single allocation (0 when the device did not say)."""
        return self._max_memory_allocation_size

    def max_memory_allocation_count(self) -> int:
        return self._max_memory_allocation_count

    def timestamp_period(self) -> float:
        return self._timestamp_period

    def device_profile(self):
        """The DeviceProfile (VKNCNN_DEVICE_PROFILE) these values were clamped to, or None."""
        return self._profile

    # -- memory and queues ------------------------------------------------------------------
    def memory_heaps(self) -> list:
        """[(size in bytes, VkMemoryHeapFlags)] per heap."""
        return list(self._memory_heaps)

    def memory_types(self) -> list:
        """[(VkMemoryPropertyFlags, heap index)] per memory type."""
        return list(self._memory_types)

    def queue_families(self) -> list:
        """[(VkQueueFlags, queue count)] per family."""
        return list(self._queue_families)

    def compute_queue_family_index(self) -> int:
        return self._compute_queue_family

    def compute_queue_count(self) -> int:
        i = self._compute_queue_family
        return self._queue_families[i][1] if i >= 0 else 0

    def __repr__(self) -> str:
        return (f"<GpuInfo '{self._name}' {self.type_name()} api={version_string(self._api_version)} "
                f"fp16-s/a={int(self._fp16_storage)}/{int(self._fp16_arithmetic)} "
                f"int8-s/a={int(self._int8_storage)}/{int(self._int8_arithmetic)} "
                f"subgroup={self._subgroup_size} wg={self._max_workgroup_size}/{self._max_workgroup_invocations}"
                + (f" profile={self._profile.name}" if self._profile is not None else "") + ">")


_COMPONENT_NAMES = {"FLOAT16": "f16", "FLOAT32": "f32", "FLOAT64": "f64", "SINT8": "s8", "UINT8": "u8",
                    "SINT32": "s32", "UINT32": "u32", "SINT16": "s16", "UINT16": "u16"}


def _cooperative_matrix_shapes(instance_handle, pd) -> frozenset:
    """vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, subgroup scope, as plain tuples."""
    ffi, lib = vk.ffi, vk.lib
    fn = lib.vkGetInstanceProcAddr(instance_handle, b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
    if fn == ffi.NULL:
        return frozenset()
    query = ffi.cast("PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", fn)
    count = ffi.new("uint32_t*")
    if query(pd, count, ffi.NULL) != 0 or not 0 < count[0] <= 1024:
        return frozenset()
    props = ffi.new("VkCooperativeMatrixPropertiesKHR[]", count[0])
    for i in range(count[0]):
        props[i].sType = vk.VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR
    if query(pd, count, props) != 0:
        return frozenset()
    names = {getattr(vk, f"VK_COMPONENT_TYPE_{k}_KHR"): v for k, v in _COMPONENT_NAMES.items()}
    shapes = set()
    for p in props[0:count[0]]:
        if p.scope == vk.VK_SCOPE_SUBGROUP_KHR and p.AType == p.BType and p.CType == p.ResultType:
            a, c = names.get(p.AType), names.get(p.CType)
            if a and c:
                shapes.add((p.MSize, p.NSize, p.KSize, a, c))
    return frozenset(shapes)


def _link(head, chain) -> None:
    """Chain cffi structs through pNext: head -> chain[0] -> chain[1] ..."""
    prev = head
    for s in chain:
        prev.pNext = s
        prev = s


def _features_1_0(pd):
    features = vk.ffi.new("VkPhysicalDeviceFeatures*")
    vk.lib.vkGetPhysicalDeviceFeatures(pd, features)
    return features


def _device_extensions(pd) -> frozenset:
    ffi, lib = vk.ffi, vk.lib
    count = ffi.new("uint32_t*")
    lib.vkEnumerateDeviceExtensionProperties(pd, ffi.NULL, count, ffi.NULL)
    props = ffi.new("VkExtensionProperties[]", count[0])
    lib.vkEnumerateDeviceExtensionProperties(pd, ffi.NULL, count, props)
    return frozenset(ffi.string(props[i].extensionName).decode() for i in range(count[0]))


def _memory_properties(pd):
    mem = vk.ffi.new("VkPhysicalDeviceMemoryProperties*")
    vk.lib.vkGetPhysicalDeviceMemoryProperties(pd, mem)
    types = [(mem.memoryTypes[i].propertyFlags, mem.memoryTypes[i].heapIndex) for i in range(mem.memoryTypeCount)]
    heaps = [(mem.memoryHeaps[i].size, mem.memoryHeaps[i].flags) for i in range(mem.memoryHeapCount)]
    return types, heaps


def _queue_families(pd):
    ffi, lib = vk.ffi, vk.lib
    count = ffi.new("uint32_t*")
    lib.vkGetPhysicalDeviceQueueFamilyProperties(pd, count, ffi.NULL)
    props = ffi.new("VkQueueFamilyProperties[]", count[0])
    lib.vkGetPhysicalDeviceQueueFamilyProperties(pd, count, props)
    return [(props[i].queueFlags, props[i].queueCount) for i in range(count[0])]
