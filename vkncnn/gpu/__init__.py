"""The Vulkan runtime: devices, memory, tensors, pipelines and the command recorder.

Importing this package (or any module in it) does not load Vulkan: the `vulkan`
binding is imported on first use (vk.py). The main names are available lazily:

    from vkncnn.gpu import run_shader, ShaderProgram, get_gpu_device, VkCompute, Pipeline, VkMat
"""

from __future__ import annotations

import importlib

# Imported eagerly (it loads no Vulkan at import) because the function and its module share
# a name: this binding wins over the submodule attribute that importing it sets.
from .run_shader import run_shader

_EXPORTS = {
    "create_gpu_instance": "vulkan.instance",
    "destroy_gpu_instance": "vulkan.instance",
    "get_gpu_count": "vulkan.instance",
    "get_default_gpu_index": "vulkan.instance",
    "get_gpu_info": "vulkan.instance",
    "get_gpu_device": "vulkan.instance",
    "validation_messages": "vulkan.instance",
    "GpuInfo": "vulkan.gpu_info",
    "VulkanDevice": "vulkan.device",
    "VkBlobAllocator": "vulkan.allocator",
    "VkStagingAllocator": "vulkan.allocator",
    "VkWeightAllocator": "vulkan.allocator",
    "VkBufferMemory": "vulkan.allocator",
    "VkMat": "vulkan.vkmat",
    "Pipeline": "vulkan.pipeline",
    "VkCompute": "vulkan.command",
    "VkTransfer": "vulkan.command",
    "HostSlot": "vulkan.command",
    "ReplanNeeded": "vulkan.command",
    "Download": "vulkan.command",
    "transfer_bytes": "vulkan.command",
    "convert_packing": "vulkan.packing",
    "ShaderProgram": "shader_program",
    "ShaderBuffer": "shader_buffer",
    "ShaderTiming": "shader_timing",
}

__all__ = [
    "Download",
    "GpuInfo",
    "HostSlot",
    "Pipeline",
    "ReplanNeeded",
    "ShaderBuffer",
    "ShaderProgram",
    "ShaderTiming",
    "VkBlobAllocator",
    "VkBufferMemory",
    "VkCompute",
    "VkMat",
    "VkStagingAllocator",
    "VkTransfer",
    "VkWeightAllocator",
    "VulkanDevice",
    "convert_packing",
    "create_gpu_instance",
    "destroy_gpu_instance",
    "get_default_gpu_index",
    "get_gpu_count",
    "get_gpu_device",
    "get_gpu_info",
    "run_shader",
    "transfer_bytes",
    "validation_messages",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'vkncnn.gpu' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
