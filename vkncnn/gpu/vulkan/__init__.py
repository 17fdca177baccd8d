"""The Vulkan machinery: instance and devices, memory, VkMat, the command recorder,
pipelines, barriers, descriptors, timestamps, and the lifetimes that tie them together."""
