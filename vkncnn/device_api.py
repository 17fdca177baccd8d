"""pyncnn's GPU query functions; they load the Vulkan runtime only when called.

Without a Vulkan loader or device they report zero GPUs instead of failing, so
CPU-only machines run the same scripts.
"""

from __future__ import annotations

from .errors import GpuError


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


def get_gpu_info(device_index: int = 0):
    inst = _instance()
    if inst is None:
        raise GpuError("no Vulkan runtime available (the `vulkan` package or a loader is missing)")
    return inst.get_gpu_info(device_index)


def get_gpu_device(device_index: int = 0):
    inst = _instance()
    if inst is None:
        raise GpuError("no Vulkan runtime available (the `vulkan` package or a loader is missing)")
    return inst.get_gpu_device(device_index)
