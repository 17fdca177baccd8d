"""convert_packing: repack a VkMat between elempack 1 and 4 on the GPU (shaders/packing.comp).

ncnn's VulkanDevice::convert_packing, and like it part of the Vulkan machinery: the device
offers it (VulkanDevice.convert_packing) and VkCompute's download cast uses axis_and_inner,
so it sits below the layers' recorders (gpu/ops/), which all reach it through the device.

Layers that support pack4 want their input in pack4 when the packing axis divides by 4,
others want pack1 (ncnn's convert_layout). The shader copies scalars raw, so the storage
precision (fp32 or fp16) is whatever the source has; it is picked from src.elemsize
rather than from opt, so a tensor is never reinterpreted.
"""

from __future__ import annotations

from ...errors import GpuError
from .pipeline import Pipeline, shader_pipeline
from .vkmat import VkMat


def axis_and_inner(src: VkMat) -> tuple:
    """(items along the packing axis, positions per item)."""
    if src.dims == 1:
        return src.w, 1
    if src.dims == 2:
        return src.h, src.w
    return src.c, src.cstep


def _local_size(inner: int) -> tuple:
    """64 invocations: x over positions (up to 64), y over items for the rest (dims 1 has 1 position)."""
    x = min(64, 1 << (max(inner, 1).bit_length() - 1))
    return (x, 64 // x, 1)


def _pipeline(vkdev, scalar_size: int, in_ep: int, out_ep: int, local: tuple) -> Pipeline:
    return shader_pipeline(vkdev, "packing", scalar_size == 2, [in_ep, out_ep], local)


def convert_packing(src: VkMat, dst_elempack: int, cmd, opt=None) -> VkMat:
    """A VkMat with src's contents in `dst_elempack` (src itself when it already is)."""
    if dst_elempack not in (1, 4):
        raise GpuError(f"convert_packing: elempack must be 1 or 4, got {dst_elempack}")
    if src.elempack == dst_elempack:
        return src
    scalar = src.scalar_size()
    if scalar not in (2, 4):
        raise GpuError(f"convert_packing: {scalar}-byte scalars are not supported (fp32 and fp16 are)")
    items, inner = axis_and_inner(src)
    n = items * src.elempack
    out_items = -(-n // dst_elempack)
    fields = {1: (out_items, 1, 1, 1), 2: (src.w, out_items, 1, 1),
              3: (src.w, src.h, 1, out_items), 4: (src.w, src.h, src.d, out_items)}[src.dims]
    allocator = cmd.blob_allocator(opt)
    dst = VkMat(*fields, src.dims, scalar * dst_elempack, dst_elempack, allocator)
    if dst.empty():
        return dst
    pipeline = _pipeline(cmd.vkdev, scalar, src.elempack, dst_elempack, _local_size(inner))
    cmd.record_pipeline(pipeline, [src, dst], [n, inner, out_items], (inner, out_items, 1))
    return dst
