"""Moving tensor data on the GPU without arithmetic: views and strided copies.

Shape layers (Reshape, Permute, Crop, Slice, Concat, Tile, ShuffleChannel, PixelShuffle,
Reorg, ...) never compute anything: each output scalar is some input scalar. Two tools
cover them all:

* `view(src, shape)`: a VkMat of another shape on the SAME buffer, when the bytes would
  be identical (always for elempack 1; for elempack 4 when the packing axis and the
  positions per item stay the same). The buffer's refcount counts every view, so each
  VkMat can be released once, in any order, and the buffer goes back to its allocator
  after the last one (vkmat.py). A view is always a new VkMat object: the runtime's
  light mode releases a layer's inputs when their last consumer is recorded, and an
  output that *was* its input object would be emptied with it.

* `record_strided_copy(...)`: shaders/gather.comp. The copy is an index space of axes;
  each axis has an extent and a stride on each side, in scalars of the *logical*
  (unpacked numpy) tensors, plus a base offset per side. A permute is strides taken in
  another order, a crop is a base plus the input's strides, a concat is one copy per
  input into the output at an offset, a tile is a stride of 0, a channel shuffle splits
  the channel axis into two. The shader turns logical indices into packed addresses, so
  one description serves elempack 1 and 4 on either side. When both sides are elempack 4
  and the four lanes of every item travel together, the copy is lifted to whole vec4
  items (`_lift`), which is the common case for slices and concats along channels.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import GpuError
from ..vulkan.pipeline import flat_grid, shader_pipeline  # shape layers reach these through this module too
from ..vulkan.vkmat import VkMat
from .dispatch_options import storage_is_fp16  # shape layers reach it through this module too

MAX_AXES = 8


# -- shapes -------------------------------------------------------------------------------------
def c_strides(shape: tuple) -> tuple:
    """C-order strides (in elements) of a logical shape."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= int(n)
    return tuple(reversed(out))


def inner_of(shape: tuple) -> int:
    """Positions per item of the packing axis (numpy axis 0): the product of the other axes."""
    return int(math.prod(shape[1:]))


def output_elempack(shape: tuple, opt) -> int:
    """ncnn's rule for a new tensor: pack4 when allowed and the packing axis divides by 4."""
    return 4 if getattr(opt, "use_packing_layout", True) and shape[0] % 4 == 0 else 1


def copy_elempack(shape: tuple, opt, inputs) -> int:
    """The elempack of a copying layer's new output (Slice, Tile, Concat): pack1 when every
    input came pack1, else ncnn's rule (output_elempack). A pack1 flow, such as a decoder's
    heads on their way to the attention, then stays pack1: packing it here would cost a
    conversion dispatch where a pack1 reader takes it back."""
    if inputs and all(b.elempack == 1 for b in inputs):
        return 1
    return output_elempack(shape, opt)


def fake(shape: tuple) -> np.ndarray:
    """A zero-byte array of `shape`: lets shape-only CPU helpers (expressions, boxes) run on VkMats."""
    return np.broadcast_to(np.float32(0), tuple(int(s) for s in shape))


def same_layout(shape_a: tuple, shape_b: tuple, elempack: int) -> bool:
    """Whether two logical shapes hold the same bytes in `elempack`."""
    if math.prod(shape_a) != math.prod(shape_b):
        return False
    if elempack == 1:
        return True
    return shape_a[0] == shape_b[0] and inner_of(shape_a) == inner_of(shape_b)


def view(src: VkMat, shape: tuple) -> VkMat:
    """A new VkMat of logical `shape` sharing src's buffer; GpuError unless the bytes agree (same_layout)."""
    shape = tuple(int(s) for s in shape)
    if not same_layout(src.numpy_shape(), shape, src.elempack):
        raise GpuError(f"view: {src.numpy_shape()} in elempack {src.elempack} cannot be seen as {shape}")
    out = VkMat.for_numpy_shape(shape, src.elempack, src.scalar_size(), None)
    out.allocator = src.allocator
    out.data = src.data
    if src.data is not None:
        src.data.refcount += 1  # released once per VkMat; the buffer goes with the last one
    return out


def new_like_shape(shape: tuple, elempack: int, scalar_size: int, cmd, opt) -> VkMat:
    """A new blob VkMat of logical `shape`."""
    return VkMat.for_numpy_shape(tuple(int(s) for s in shape), elempack, scalar_size,
                                 cmd.blob_allocator(opt))


def reshape_to(src: VkMat, shape: tuple, cmd, opt) -> VkMat:
    """src's scalars in C order under a new logical shape: a view when the bytes agree, else a copy."""
    shape = tuple(int(s) for s in shape)
    if same_layout(src.numpy_shape(), shape, src.elempack):
        return view(src, shape)
    dst = new_like_shape(shape, output_elempack(shape, opt), src.scalar_size(), cmd, opt)
    total = math.prod(shape)
    record_strided_copy(cmd, src, dst, [total], [1], [1])
    return dst


# -- the strided copy ---------------------------------------------------------------------------
class _Side:
    """One tensor of a copy: base and strides in logical scalars, its packing."""

    def __init__(self, mat: VkMat, base: int, strides: list) -> None:
        self.base = int(base)
        self.strides = [int(s) for s in strides]
        self.elempack = mat.elempack
        self.inner = inner_of(mat.numpy_shape())


def _drop_unit_axes(extents, sides):
    keep = [k for k, e in enumerate(extents) if e != 1] or [0]
    return [extents[k] for k in keep], [[s.strides[k] for k in keep] for s in sides]


def _lift_side(side: _Side, extents: list, strides: list, k: int):
    """Item-unit (base, strides) if axis k moves the 4 lanes of each item of this side, else None."""
    inner = side.inner
    if strides[k] != inner or extents[k] % 4 or (side.base // inner) % 4:
        return None
    small_span = side.base % inner
    lifted = []
    for j, (e, s) in enumerate(zip(extents, strides)):
        if j == k:
            lifted.append(inner)  # 4 lanes further along the packing axis = one item further
        elif s % (4 * inner) == 0:
            lifted.append(s // 4)  # whole groups of 4 along the packing axis
        elif 0 <= s < inner:
            lifted.append(s)       # stays inside one item's positions
            small_span += (e - 1) * s
        else:
            return None
    if small_span >= inner:
        return None
    return (side.base // inner // 4) * inner + side.base % inner, lifted


def _lift(extents, src: _Side, src_strides, dst: _Side, dst_strides):
    """The copy in whole vec4 items, or None when some item's lanes would scatter."""
    if src.elempack != 4 or dst.elempack != 4:
        return None
    for k in range(len(extents)):
        a = _lift_side(src, extents, src_strides, k)
        b = _lift_side(dst, extents, dst_strides, k)
        if a is not None and b is not None:
            ext = list(extents)
            ext[k] //= 4
            return ext, a, b
    return None


def _merge_axes(extents, s_strides, d_strides):
    """Fuse neighbouring axes that are contiguous on both sides (fewer divisions per invocation)."""
    ext, ss, ds = [extents[-1]], [s_strides[-1]], [d_strides[-1]]
    for e, s, d in zip(reversed(extents[:-1]), reversed(s_strides[:-1]), reversed(d_strides[:-1])):
        if s == ss[0] * ext[0] and d == ds[0] * ext[0]:
            ext[0] *= e
        else:
            ext.insert(0, e)
            ss.insert(0, s)
            ds.insert(0, d)
    return ext, ss, ds


def record_strided_copy(cmd, src: VkMat, dst: VkMat, extents, src_strides, dst_strides,
                        src_base: int = 0, dst_base: int = 0) -> None:
    """dst[dst_base + sum i_k*dst_strides_k] = src[src_base + sum i_k*src_strides_k] for every index.

    Bases and strides count scalars of the logical (unpacked numpy) tensors; the
    elempacks of src and dst are read from the VkMats. src and dst share a scalar type
    (unless nothing is copied: an empty blob uploaded in fp16 storage may be fp32).
    """
    extents = [int(e) for e in extents]
    if not (len(extents) == len(src_strides) == len(dst_strides)):
        raise GpuError("strided copy: one extent and two strides per axis")
    total = math.prod(extents)
    if total == 0 or src.empty() or dst.empty():
        return
    if src.scalar_size() != dst.scalar_size():
        raise GpuError(f"strided copy between {src.scalar_size()}-byte and {dst.scalar_size()}-byte scalars")
    s_side, d_side = _Side(src, src_base, src_strides), _Side(dst, dst_base, dst_strides)
    extents, (ss, ds) = _drop_unit_axes(extents, [s_side, d_side])

    lifted = _lift(extents, s_side, ss, d_side, ds)
    vec4 = lifted is not None
    if vec4:
        extents, (sb, ss), (db, ds) = lifted
        total //= 4
    else:
        sb, db = s_side.base, d_side.base
    extents, ss, ds = _merge_axes(extents, ss, ds)
    if len(extents) > MAX_AXES:
        raise GpuError(f"strided copy over {len(extents)} axes; the shader takes {MAX_AXES}")
    pad = MAX_AXES - len(extents)
    extents, ss, ds = [1] * pad + extents, [0] * pad + ss, [0] * pad + ds

    constants = [total] + extents[1:] + ss + ds + [sb, db, s_side.inner, d_side.inner,
                                                    s_side.elempack, d_side.elempack]
    pipeline = shader_pipeline(cmd.vkdev, "gather", storage_is_fp16(src), defines={"VEC4": int(vec4)})
    cmd.record_pipeline(pipeline, [src, dst], constants, flat_grid(total))
