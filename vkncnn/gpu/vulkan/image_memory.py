"""VkImageMemory: a 3-D storage image, as pyncnn's VkAllocator.fastMalloc(w, h, c,
elemsize, elempack) gives one.

vkncnn's kernels read and write buffers only (ncnn's image-storage path is off by default
and `opt.use_image_storage` has no effect here); images exist for scripts that allocate
them through pyncnn's allocator API. Each is a real VkImage bound to its own memory.
"""

from __future__ import annotations

from ...errors import GpuError
from .vk import check, vk

# (elemsize, elempack) -> one texel's format, as ncnn picks them
_FORMATS = {
    (4, 1): "VK_FORMAT_R32_SFLOAT", (16, 4): "VK_FORMAT_R32G32B32A32_SFLOAT",
    (2, 1): "VK_FORMAT_R16_SFLOAT", (8, 4): "VK_FORMAT_R16G16B16A16_SFLOAT",
    (1, 1): "VK_FORMAT_R8_SINT", (4, 4): "VK_FORMAT_R8G8B8A8_SINT",
}


class VkImageMemory:
    """A VkImage of width x height x depth texels and the memory bound to it."""

    def __init__(self, vkdev, width: int, height: int, depth: int, elemsize: int, elempack: int,
                 memory_type_index: int) -> None:
        name = _FORMATS.get((int(elemsize), int(elempack)))
        if name is None:
            raise GpuError(f"no image format for elemsize {elemsize} with elempack {elempack}; "
                           f"expected one of {sorted(_FORMATS)}")
        if min(width, height, depth) <= 0:
            raise GpuError(f"image extent must be positive, got {width} x {height} x {depth}")
        ffi, lib = vk.ffi, vk.lib
        self.vkdev, self.width, self.height, self.depth = vkdev, int(width), int(height), int(depth)
        self.refcount = 0
        info = ffi.new("VkImageCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, "imageType": vk.VK_IMAGE_TYPE_3D,
            "format": getattr(vk, name), "extent": {"width": self.width, "height": self.height,
                                                   "depth": self.depth},
            "mipLevels": 1, "arrayLayers": 1, "samples": vk.VK_SAMPLE_COUNT_1_BIT,
            "tiling": vk.VK_IMAGE_TILING_OPTIMAL,
            "usage": vk.VK_IMAGE_USAGE_STORAGE_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
            | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
            "sharingMode": vk.VK_SHARING_MODE_EXCLUSIVE, "initialLayout": vk.VK_IMAGE_LAYOUT_UNDEFINED})
        image = ffi.new("VkImage*")
        check(lib.vkCreateImage(vkdev.handle, info, ffi.NULL, image), "vkCreateImage")
        self.image = image[0]
        req = ffi.new("VkMemoryRequirements*")
        lib.vkGetImageMemoryRequirements(vkdev.handle, self.image, req)
        if not (req.memoryTypeBits >> memory_type_index) & 1:
            memory_type_index = vkdev.find_memory_type(req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
        alloc = ffi.new("VkMemoryAllocateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, "allocationSize": req.size,
            "memoryTypeIndex": memory_type_index})
        memory = ffi.new("VkDeviceMemory*")
        result = lib.vkAllocateMemory(vkdev.handle, alloc, ffi.NULL, memory)
        if result != 0:
            lib.vkDestroyImage(vkdev.handle, self.image, ffi.NULL)
            check(result, f"vkAllocateMemory for a {self.width} x {self.height} x {self.depth} image")
        self.memory = memory[0]
        check(lib.vkBindImageMemory(vkdev.handle, self.image, self.memory, 0), "vkBindImageMemory")
        self.bind_capacity = req.size

    def destroy(self) -> None:
        if self.image is None or self.vkdev.destroyed:
            return
        ffi, lib = vk.ffi, vk.lib
        lib.vkDestroyImage(self.vkdev.handle, self.image, ffi.NULL)
        lib.vkFreeMemory(self.vkdev.handle, self.memory, ffi.NULL)
        self.image = self.memory = None

    def __repr__(self) -> str:
        return f"<VkImageMemory {self.width} x {self.height} x {self.depth}>"
