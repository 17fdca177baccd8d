"""A VkPipelineCache kept on disk: the driver compiles each pipeline once per machine.

Shipping SPIR-V removes the GLSL compile, but the driver still turns SPIR-V into machine
code at vkCreateComputePipelines. With a cold driver cache that made a model's first
inference take far longer than a warm one (figures: docs/perf-notes.md, "Pipeline cache
on disk"). The driver's own cache is not guaranteed (and is off in many containers), so
vkncnn hands the driver a VkPipelineCache seeded from a file and writes it back after
new pipelines were made.

File: <spirv cache folder>/pipelines-<vendor>-<device>-<pipelineCacheUUID>.vkpc, holding our
magic, the sha256 of the payload, then the payload exactly as vkGetPipelineCacheData gave
it. A file is used only if its checksum holds and the payload's own Vulkan header (32
bytes: length, version 1, vendor id, device id, pipelineCacheUUID) names this device and
driver; anything else is ignored (a new driver version changes the UUID, so its file name
changes too). Writes are atomic (temporary file, then rename); an unwritable folder means no
disk cache, never an error. VKNCNN_PIPELINE_CACHE=0 turns it off.
"""

from __future__ import annotations

import os
import struct
import threading
from pathlib import Path

from ..compiler import spirv_cache
from .vk import check, vk

_MAGIC = b"VKNCPC01"
_HEADER = len(_MAGIC) + 32  # magic and sha256 before the payload (spirv_cache.write_checked)
_VK_HEADER = struct.Struct("<IIII16s")  # headerSize, headerVersion, vendorID, deviceID, uuid
MAX_FILE_BYTES = 256 << 20  # a bigger file is not ours: never read it whole


def enabled() -> bool:
    return os.environ.get("VKNCNN_PIPELINE_CACHE", "1") != "0"


def cache_path(info) -> Path:
    uuid = bytes(info.pipeline_cache_uuid()).hex()
    return spirv_cache.cache_dir() / f"pipelines-{info.vendor_id():04x}-{info.device_id():04x}-{uuid}.vkpc"


def payload_matches(payload: bytes, info) -> bool:
    """Is this vkGetPipelineCacheData output from this device and driver?"""
    if len(payload) < _VK_HEADER.size:
        return False
    size, version, vendor, device, uuid = _VK_HEADER.unpack_from(payload)
    return (size >= _VK_HEADER.size and version == vk.VK_PIPELINE_CACHE_HEADER_VERSION_ONE
            and vendor == info.vendor_id() and device == info.device_id()
            and uuid == bytes(info.pipeline_cache_uuid()))


def read_payload(path: Path, info) -> bytes | None:
    """The stored cache data for this device, or None when absent, damaged or foreign."""
    payload = spirv_cache.read_checked(path, _MAGIC, MAX_FILE_BYTES)
    return payload if payload is not None and payload_matches(payload, info) else None


def write_payload(path: Path, payload: bytes) -> bool:
    return spirv_cache.write_checked(path, _MAGIC, payload)


class DiskPipelineCache:
    """One device's VkPipelineCache, loaded from and saved to its file."""

    def __init__(self, vkdev) -> None:
        ffi, lib = vk.ffi, vk.lib
        self.vkdev = vkdev
        self.path = cache_path(vkdev.info) if enabled() else None
        self._dirty = False
        self._lock = threading.Lock()
        initial = read_payload(self.path, vkdev.info) if self.path is not None else None
        data = ffi.from_buffer(initial) if initial else ffi.NULL
        info = ffi.new("VkPipelineCacheCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
            "initialDataSize": len(initial) if initial else 0, "pInitialData": data})
        handle = ffi.new("VkPipelineCache*")
        check(lib.vkCreatePipelineCache(vkdev.handle, info, ffi.NULL, handle), "vkCreatePipelineCache")
        self.handle = handle[0]
        self.loaded_bytes = len(initial) if initial else 0

    def pipeline_created(self) -> None:
        self._dirty = True

    def save(self) -> bool:
        """Write the cache back if pipelines were created since the last save."""
        if self.path is None or not self._dirty or self.handle is None:
            return False
        ffi, lib = vk.ffi, vk.lib
        with self._lock:
            self._dirty = False
            size = ffi.new("size_t*")
            check(lib.vkGetPipelineCacheData(self.vkdev.handle, self.handle, size, ffi.NULL),
                  "vkGetPipelineCacheData")
            if not 0 < size[0] <= MAX_FILE_BYTES:
                return False
            buf = ffi.new("char[]", size[0])
            result = lib.vkGetPipelineCacheData(self.vkdev.handle, self.handle, size, buf)
            if result != 0:  # VK_INCOMPLETE: it grew meanwhile; the next save catches up
                self._dirty = True
                return False
            return write_payload(self.path, bytes(ffi.buffer(buf, size[0])))

    def destroy(self) -> None:
        if self.handle is not None:
            vk.lib.vkDestroyPipelineCache(self.vkdev.handle, self.handle, vk.ffi.NULL)
            self.handle = None
