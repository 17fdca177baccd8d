"""GPU timestamps per layer: where a recorded plan spends its device time.

A `LayerTimer` owns a Vulkan query pool. The runtime marks the start of a plan and
the end of each GPU layer (or dispatch) and of each host step; after a submit (or a
replay: the recorded reset runs again) `durations()` gives (label, microseconds) pairs,
each the time between the previous mark and this one, barriers included.
"""

from __future__ import annotations

from .vk import check, vk


class LayerTimer:
    def __init__(self, vkdev, capacity: int) -> None:
        ffi, lib = vk.ffi, vk.lib
        self.vkdev = vkdev
        self.capacity = capacity
        info = ffi.new("VkQueryPoolCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            "queryType": vk.VK_QUERY_TYPE_TIMESTAMP, "queryCount": capacity})
        pool = ffi.new("VkQueryPool*")
        check(lib.vkCreateQueryPool(vkdev.handle, info, ffi.NULL, pool), "vkCreateQueryPool")
        self.pool = pool[0]
        self.labels: list[str] = []
        self.period_ns = float(vkdev.info.timestamp_period())

    def start(self, cmd) -> None:
        cmd.record_timestamp(self.pool, 0, reset_count=self.capacity)
        self.labels = ["<start>"]

    def mark(self, cmd, label: str) -> None:
        if len(self.labels) < self.capacity:
            cmd.record_timestamp(self.pool, len(self.labels))
            self.labels.append(label)

    def durations(self) -> list[tuple[str, float]]:
        ffi, lib = vk.ffi, vk.lib
        n = len(self.labels)
        if n < 2:
            return []
        data = ffi.new("uint64_t[]", n)
        check(lib.vkGetQueryPoolResults(self.vkdev.handle, self.pool, 0, n, 8 * n, data, 8,
                                        vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults")
        return [(self.labels[i], (data[i] - data[i - 1]) * self.period_ns / 1e3) for i in range(1, n)]

    def destroy(self) -> None:
        if self.pool is not None and not self.vkdev.destroyed:
            vk.lib.vkDestroyQueryPool(self.vkdev.handle, self.pool, vk.ffi.NULL)
        self.pool = None
