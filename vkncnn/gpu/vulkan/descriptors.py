"""Descriptor sets for one recorder: which buffers a dispatch's bindings point at.

Sets are allocated and written at record time and stay valid for every replay (a
replay binds the same buffers), so they live as long as the recorder. They come from
pools that grow as needed; the whole arena goes in one go at release.
"""

from __future__ import annotations

from .vk import check, vk

_SETS_PER_POOL = 128
_BUFFERS_PER_POOL = 1024


class DescriptorArena:
    def __init__(self, vkdev) -> None:
        self.vkdev = vkdev
        self._pools: list = []
        self._sets_left = 0
        self._storage_left = 0
        self._uniform_left = 0

    def _new_pool(self, storage: int, uniform: int) -> None:
        ffi, lib = vk.ffi, vk.lib
        storage_n = max(_BUFFERS_PER_POOL, storage)
        uniform_n = max(_BUFFERS_PER_POOL // 8, uniform)
        sizes = ffi.new("VkDescriptorPoolSize[]", 2)
        sizes[0].type, sizes[0].descriptorCount = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, storage_n
        sizes[1].type, sizes[1].descriptorCount = vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, uniform_n
        info = ffi.new("VkDescriptorPoolCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
            "maxSets": _SETS_PER_POOL, "poolSizeCount": 2, "pPoolSizes": sizes})
        pool = ffi.new("VkDescriptorPool*")
        check(lib.vkCreateDescriptorPool(self.vkdev.handle, info, ffi.NULL, pool), "vkCreateDescriptorPool")
        self._pools.append(pool[0])
        self._sets_left, self._storage_left, self._uniform_left = _SETS_PER_POOL, storage_n, uniform_n

    def write_set(self, layout, buffers, storage_flags) -> object:
        """A descriptor set of `layout` whose binding i is buffers[i] = (VkBuffer, offset, range)."""
        ffi, lib = vk.ffi, vk.lib
        storage = sum(1 for s in storage_flags if s)
        uniform = len(storage_flags) - storage
        if not self._pools or self._sets_left < 1 or self._storage_left < storage or self._uniform_left < uniform:
            self._new_pool(storage, uniform)
        self._sets_left -= 1
        self._storage_left -= storage
        self._uniform_left -= uniform

        layouts = ffi.new("VkDescriptorSetLayout[]", [layout])
        alloc = ffi.new("VkDescriptorSetAllocateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            "descriptorPool": self._pools[-1], "descriptorSetCount": 1, "pSetLayouts": layouts})
        out = ffi.new("VkDescriptorSet*")
        check(lib.vkAllocateDescriptorSets(self.vkdev.handle, alloc, out), "vkAllocateDescriptorSets")
        n = len(buffers)
        if n:
            infos = ffi.new("VkDescriptorBufferInfo[]", n)
            writes = ffi.new("VkWriteDescriptorSet[]", n)
            for i, (buffer, offset, size) in enumerate(buffers):
                infos[i].buffer, infos[i].offset, infos[i].range = buffer, offset, size
                w = writes[i]
                w.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
                w.dstSet = out[0]
                w.dstBinding = i
                w.descriptorCount = 1
                w.descriptorType = (vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER if storage_flags[i]
                                    else vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)
                w.pBufferInfo = infos + i
            lib.vkUpdateDescriptorSets(self.vkdev.handle, n, writes, 0, ffi.NULL)
        return out[0]

    def destroy(self) -> None:
        ffi, lib = vk.ffi, vk.lib
        for pool in self._pools:
            lib.vkDestroyDescriptorPool(self.vkdev.handle, pool, ffi.NULL)
        self._pools.clear()
