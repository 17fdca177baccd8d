"""VulkanDevice: one logical device with one compute queue, and what is shared on it.

Shared per device: the queue (submits are serialised by a lock: a VkQueue must not be
used from two threads at once), the pipeline cache (shader modules and pipelines keyed
by SPIR-V hash + specialization + local size), pools of blob and staging allocators
that extractors borrow and give back, and a small dummy buffer bound where a shader
binding has no tensor (Vulkan does not allow a null storage buffer).

16-bit storage and shaderFloat16 (and their 8-bit siblings) are enabled whenever the
device has them; whether a network *uses* fp16 is the Option's business.

Lifetime: every buffer handed out by an allocator and every live recorder holds a
reference (`retain`/`release_ref`). After destroy_gpu_instance() the device is only
retired, and destroyed once the count drops to zero, so a late VkMat.release() or a
garbage-collected Net never touches a destroyed VkDevice.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
import weakref

from ...errors import GpuError
from . import lifetime, packing
from .allocator import VkBlobAllocator, VkStagingAllocator
from .gpu_info import TYPE_CPU, GpuInfo
from .lifetime import RefCounted
from .pipeline_cache import DiskPipelineCache
from .vk import check, cstrings, vk

__all__ = ["GpuInfo", "VulkanDevice"]

_API_1_1 = (1 << 22) | (1 << 12)
_API_1_2 = (1 << 22) | (2 << 12)


def _device_extensions(info: GpuInfo) -> list[str]:
    """Extensions to enable: the fp16/int8 storage ones when not core, portability if present."""
    wanted = ["VK_KHR_portability_subset"]  # must be enabled when a device (MoltenVK) lists it
    if info.api_version() < _API_1_2:
        wanted += ["VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8"]
    if info.support_cooperative_matrix():
        wanted += ["VK_KHR_cooperative_matrix", "VK_KHR_vulkan_memory_model"]
    return [e for e in wanted if info.support_extension(e)]


class VulkanDevice(RefCounted):
    """A logical device on one physical device (ncnn's VulkanDevice)."""

    # instance.get_gpu_device, set by instance.py when it loads (it imports this module)
    device_for_index = None

    def __new__(cls, *args, **kwargs):
        if len(args) + len(kwargs) <= 1 and set(kwargs) <= {"device_index"}:
            # pyncnn's VulkanDevice(device_index=0): the device the instance keeps for that
            # index (one logical device per GPU, shared by every net and allocator)
            return cls.device_for_index(args[0] if args else kwargs.get("device_index", 0))
        return super().__new__(cls)

    def __init__(self, instance=None, info: GpuInfo | None = None, index: int = 0, **kwargs) -> None:
        if info is None:
            return  # VulkanDevice(device_index): __new__ handed out the existing device
        ffi, lib = vk.ffi, vk.lib
        self.instance = instance
        self.info = info
        self.index = index
        self._init_refcount()
        self.queue_lock = threading.Lock()
        self._spin_wait = info.type() != TYPE_CPU
        # seconds spent in submit_and_wait since the device started (all threads): the host
        # sees the GPU's share of a run there, and its own share outside (tools/dev/decode_ab)
        self.queue_seconds = 0.0
        self._disk_pipelines = None  # DiskPipelineCache, made with the first pipeline
        self.cache_lock = threading.RLock()
        self.shader_modules: dict = {}   # spirv sha256 -> (VkShaderModule, ShaderInfo)
        self.pipeline_cache: dict = {}   # (sha, specializations, local size) -> PipelineObjects
        self.shared_pipelines: dict = {}  # pipeline.shader_pipeline: request -> Pipeline
        self._blob_pool: list = []
        self._staging_pool: list = []
        self._allocators = weakref.WeakSet()
        self._dummy = None

        # A Vulkan 1.0 device runs the SPIR-V 1.0 builds of the shaders (registry.spirv_target);
        # a kernel that needs Vulkan 1.1 is refused alone (device_limits.KernelUnsupported).
        family = info.compute_queue_family_index()
        if family < 0:
            raise GpuError(f"'{info.device_name()}' has no compute queue")
        self.queue_family_index = family

        # Optional features: ask only for what the device reports (asking for more fails).
        s16 = ffi.new("VkPhysicalDevice16BitStorageFeatures*", {
            "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
            "storageBuffer16BitAccess": info.support_fp16_storage(),
            "uniformAndStorageBuffer16BitAccess": info.support_fp16_uniform()})
        chain = [s16] if info.api_version() >= _API_1_1 else []
        if info.support_int8_storage():
            chain.append(ffi.new("VkPhysicalDevice8BitStorageFeatures*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
                "storageBuffer8BitAccess": True,
                "uniformAndStorageBuffer8BitAccess": info.support_int8_uniform()}))
        if info.support_fp16_arithmetic() or info.support_int8_arithmetic():
            chain.append(ffi.new("VkPhysicalDeviceShaderFloat16Int8Features*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                "shaderFloat16": info.support_fp16_arithmetic(),
                "shaderInt8": info.support_int8_arithmetic()}))
        if info.support_cooperative_matrix():  # tensor cores: convolution_coopmat.comp
            chain.append(ffi.new("VkPhysicalDeviceVulkanMemoryModelFeatures*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
                "vulkanMemoryModel": True}))
            chain.append(ffi.new("VkPhysicalDeviceCooperativeMatrixFeaturesKHR*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
                "cooperativeMatrix": True}))
        for a, b in itertools.pairwise(chain):
            a.pNext = b
        features10 = ffi.new("VkPhysicalDeviceFeatures*", {"shaderInt16": info.support_int16_arithmetic()})

        priority = ffi.new("float[]", [1.0])
        queue_info = ffi.new("VkDeviceQueueCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, "queueFamilyIndex": family,
            "queueCount": 1, "pQueuePriorities": priority})
        extensions = _device_extensions(info)
        ext_array, ext_owners = cstrings(extensions)
        create_info = ffi.new("VkDeviceCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, "pNext": chain[0] if chain else ffi.NULL,
            "queueCreateInfoCount": 1, "pQueueCreateInfos": queue_info,
            "enabledExtensionCount": len(extensions), "ppEnabledExtensionNames": ext_array,
            "pEnabledFeatures": features10})
        handle = ffi.new("VkDevice*")
        result = lib.vkCreateDevice(info.physical_device, create_info, ffi.NULL, handle)
        if result != 0:
            try:
                check(result, f"vkCreateDevice on '{info.device_name()}'")
            except GpuError as e:
                raise GpuError(f"{e}; extensions asked: {extensions or 'none'}") from None
        del ext_owners
        self.handle = handle[0]
        queue = ffi.new("VkQueue*")
        lib.vkGetDeviceQueue(self.handle, family, 0, queue)
        self.queue = queue[0]
        instance.retain()

    # -- ncnn-style accessors ---------------------------------------------------------------
    def vkdevice(self):
        return self.handle

    def check_alive(self, what: str) -> None:
        lifetime.check_not_forked(what)
        if self.retired or self.destroyed:
            raise GpuError(f"{what}: the GPU instance was destroyed (destroy_gpu_instance()); "
                           "create new objects after the instance is started again")

    # -- memory types -----------------------------------------------------------------------
    def find_memory_type(self, type_bits: int, required: int, preferred: int = 0, avoided: int = 0) -> int:
        """Index of the best memory type allowed by type_bits that has all `required` flags."""
        best, best_score = -1, None
        for i, (flags, _heap) in enumerate(self.info.memory_types()):
            if not (type_bits >> i) & 1 or flags & required != required:
                continue
            score = (flags & preferred).bit_count() * 2 - (flags & avoided).bit_count()
            if best_score is None or score > best_score:
                best, best_score = i, score
        return best

    # -- allocator pools (ncnn's acquire/reclaim) --------------------------------------------
    def acquire_blob_allocator(self):
        with self.cache_lock:
            return self._blob_pool.pop() if self._blob_pool else VkBlobAllocator(self)

    def reclaim_blob_allocator(self, allocator) -> None:
        with self.cache_lock:
            self._blob_pool.append(allocator)
        self.register_allocator(allocator)  # see _destroy: it may come back from a finalizer

    def acquire_staging_allocator(self):
        with self.cache_lock:
            return self._staging_pool.pop() if self._staging_pool else VkStagingAllocator(self)

    def trim_pools(self) -> None:
        """Free the pooled (unused) buffers of the allocators waiting in this device's pools.

        Called when a Net is released, so dropping nets returns their device memory
        instead of leaving it cached for nets that may never come."""
        with self.cache_lock:
            idle = list(self._blob_pool) + list(self._staging_pool)
        for allocator in idle:
            allocator.clear()

    def reclaim_staging_allocator(self, allocator) -> None:
        with self.cache_lock:
            self._staging_pool.append(allocator)
        self.register_allocator(allocator)

    def register_allocator(self, allocator) -> None:
        """Allocators announce themselves so device teardown can free their pooled memory."""
        self._allocators.add(allocator)

    def get_heap_budget(self) -> int:
        """MB of device-local memory this process may still use (VK_EXT_memory_budget when the
        device has it, else the size of the largest device-local heap)."""
        ffi, lib = vk.ffi, vk.lib
        local = vk.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
        heaps = self.info.memory_heaps()
        if self.info.support_extension("VK_EXT_memory_budget") and self.info.api_version() >= _API_1_1:
            budget = ffi.new("VkPhysicalDeviceMemoryBudgetPropertiesEXT*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT})
            props = ffi.new("VkPhysicalDeviceMemoryProperties2*", {
                "sType": vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, "pNext": budget})
            lib.vkGetPhysicalDeviceMemoryProperties2(self.info.physical_device, props)
            sizes = [budget.heapBudget[i] for i, (_s, flags) in enumerate(heaps) if flags & local]
        else:
            sizes = [size for size, flags in heaps if flags & local]
        return max(sizes, default=0) >> 20

    def dummy_buffer(self):
        """A 16-byte buffer for bindings without a tensor (empty VkMat)."""
        if self._dummy is None:
            self._dummy_allocator = VkBlobAllocator(self)
            self._dummy = self._dummy_allocator.fastMalloc(16, retain_device=False)
        return self._dummy

    # -- packing (ncnn: VulkanDevice::convert_packing) ---------------------------------------
    def convert_packing(self, src, dst_elempack: int, cmd, opt):
        return packing.convert_packing(src, dst_elempack, cmd, opt)

    # -- queue ------------------------------------------------------------------------------
    def submit_and_wait(self, command_buffers: list, fence) -> None:
        """Submit command buffers, in order, in one submission, and block until the GPU has
        finished them (`fence` signals then)."""
        ffi = vk.ffi
        cmdbufs = ffi.new("VkCommandBuffer[]", command_buffers)
        submit = ffi.new("VkSubmitInfo*", {"sType": vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                            "commandBufferCount": len(command_buffers),
                                            "pCommandBuffers": cmdbufs})
        fences = ffi.new("VkFence[]", [fence])
        lifetime.check_not_forked("submitting GPU work")
        start = time.perf_counter()
        try:
            self._submit_and_wait(submit, fence, fences)
        finally:
            self.queue_seconds += time.perf_counter() - start

    def _submit_and_wait(self, submit, fence, fences) -> None:
        lib = vk.lib
        with self.queue_lock:
            check(lib.vkQueueSubmit(self.queue, 1, submit, fence), "vkQueueSubmit")
        if self._spin_wait:
            self._spin_until_signaled(fence)
        timeout_s = fence_timeout_s()
        result = lib.vkWaitForFences(self.handle, 1, fences, 1, int(timeout_s * 1e9))
        if result == vk.VK_TIMEOUT:
            raise FenceTimeout(f"the GPU did not finish a submitted command buffer within {timeout_s:g} s "
                           f"on '{self.info.device_name()}' (a hung or overloaded device; "
                           "VKNCNN_FENCE_TIMEOUT_S sets the limit)")
        check(result, "vkWaitForFences")
        check(lib.vkResetFences(self.handle, 1, fences), "vkResetFences")

    SPIN_WAIT_S = 0.01

    def _spin_until_signaled(self, fence) -> None:
        """Poll the fence for up to SPIN_WAIT_S before blocking in vkWaitForFences.

        A blocking wait sleeps in the driver and wakes late: polling made whole inferences
        of small models noticeably faster (figures: docs/perf-notes.md, "Fence waits poll
        first"). Only on real GPUs: on a CPU device (lavapipe) the spinning thread would
        steal a core from the driver's own workers.
        """
        status, deadline = vk.lib.vkGetFenceStatus, time.perf_counter() + self.SPIN_WAIT_S
        while status(self.handle, fence) == vk.VK_NOT_READY and time.perf_counter() < deadline:
            pass

    # -- pipeline cache on disk --------------------------------------------------------------
    def vk_pipeline_cache(self):
        """The VkPipelineCache handle every pipeline is created through (seeded from disk)."""
        with self.cache_lock:
            if self._disk_pipelines is None:
                self._disk_pipelines = DiskPipelineCache(self)
            return self._disk_pipelines

    def save_pipeline_cache(self) -> None:
        """Persist newly created pipelines (a no-op when none were made since the last save)."""
        if self._disk_pipelines is not None and not self.destroyed:
            self._disk_pipelines.save()

    # -- lifetime (retain / release_ref / retire: lifetime.RefCounted) ----------------------
    def _destroy(self) -> None:
        ffi, lib = vk.ffi, vk.lib
        lib.vkDeviceWaitIdle(self.handle)
        # pooled allocators are named explicitly: one handed back by a recorder's finalizer
        # during garbage collection has lost its weak reference in _allocators
        for allocator in set(self._allocators) | set(self._blob_pool) | set(self._staging_pool):
            allocator.free_all()
        self._blob_pool.clear()
        self._staging_pool.clear()
        self._dummy = None
        for objs in self.pipeline_cache.values():
            objs.destroy(self.handle)
        if self._disk_pipelines is not None:
            with contextlib.suppress(Exception):  # a cache that cannot be written is no error
                self._disk_pipelines.save()
            self._disk_pipelines.destroy()
            self._disk_pipelines = None
        for module, _info in self.shader_modules.values():
            lib.vkDestroyShaderModule(self.handle, module, ffi.NULL)
        self.pipeline_cache.clear()
        self.shader_modules.clear()
        self.shared_pipelines.clear()
        lib.vkDestroyDevice(self.handle, ffi.NULL)
        self.destroyed = True
        self.instance.release_ref()

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else "retired" if self.retired else "live"
        return f"<VulkanDevice {self.index} '{self.info.device_name()}' {state}>"


class FenceTimeout(GpuError):
    """A submit did not finish in time; its command buffer may still be executing."""


DEFAULT_FENCE_TIMEOUT_S = 600.0


def fence_timeout_s() -> float:
    """How long one submit may run before it is reported as hung.

    Generous on purpose: one command buffer of a large model on a CPU device (lavapipe)
    takes seconds, and a wrong timeout would turn slow work into an error.
    """
    value = os.environ.get("VKNCNN_FENCE_TIMEOUT_S", "")
    try:
        seconds = float(value) if value else DEFAULT_FENCE_TIMEOUT_S
    except ValueError:
        seconds = DEFAULT_FENCE_TIMEOUT_S
    return seconds if seconds > 0 else DEFAULT_FENCE_TIMEOUT_S
