"""pyncnn's GPU query functions and GPU classes; they load the Vulkan runtime only when
called or first named.

Without a Vulkan loader or device the functions report zero GPUs instead of failing, so
CPU-only machines run the same scripts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import GpuError

if TYPE_CHECKING:  # the Vulkan runtime loads lazily, on the first GPU query
    from .gpu.vulkan.device import VulkanDevice
    from .gpu.vulkan.gpu_info import GpuInfo

# pyncnn's GPU classes: vkncnn.<name> resolves to the runtime's class on first use
GPU_CLASSES = {
    "VulkanDevice": "device", "GpuInfo": "gpu_info", "VkBufferMemory": "allocator",
    "VkImageMemory": "image_memory", "VkAllocator": "allocator", "VkBlobAllocator": "allocator",
    "VkWeightAllocator": "allocator", "VkStagingAllocator": "allocator",
    "VkWeightStagingAllocator": "allocator",
}


def gpu_class(name: str) -> type:
    """The GPU runtime's class `name`; loading it loads the Vulkan runtime."""
    try:
        importlib.import_module("vkncnn.gpu.vulkan.instance")  # wires VulkanDevice(index) to the devices
        module = importlib.import_module(f"vkncnn.gpu.vulkan.{GPU_CLASSES[name]}")
    except ImportError as e:
        raise GpuError(f"vkncnn.{name} needs the Vulkan runtime, which could not be loaded ({e}); "
                       "install the GPU extra: pip install 'vkncnn[gpu]'") from None
    return getattr(module, name)


def _instance():
    try:
        # lazy: the GPU runtime loads on the first GPU query, not at `import vkncnn`
        from .gpu.vulkan import instance
    except ImportError:
        return None
    return instance


def create_gpu_instance(driver_path: str | None = None) -> int:
    inst = _instance()
    return -1 if inst is None else inst.create_gpu_instance(driver_path)


def destroy_gpu_instance() -> None:
    inst = _instance()
    if inst is not None:
        inst.destroy_gpu_instance()


def get_gpu_count() -> int:
    inst = _instance()
    return 0 if inst is None else inst.get_gpu_count()


def get_default_gpu_index() -> int:
    inst = _instance()
    return -1 if inst is None else inst.get_default_gpu_index()


def get_gpu_info(device_index: int = 0) -> GpuInfo:
    inst = _instance()
    if inst is None:
        raise GpuError("no Vulkan runtime available (the `vulkan` package or a loader is missing)")
    return inst.get_gpu_info(device_index)


def get_gpu_device(device_index: int = 0) -> VulkanDevice:
    inst = _instance()
    if inst is None:
        raise GpuError("no Vulkan runtime available (the `vulkan` package or a loader is missing)")
    return inst.get_gpu_device(device_index)
