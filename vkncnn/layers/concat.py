"""Concat: join blobs of the same dims along one axis.

The axis is numpy-style over (c,[d],h,w), negative counting from the end; every other
extent must agree.

GPU: one strided copy (shaders/gather.comp) per input, into the output at its offset;
whole vec4 items move when the inputs and the output are pack4 and the offsets keep the
items aligned (e.g. channel counts that divide by 4).
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Concat")
class Concat(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copies read either elempack

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        return 0

    def _concat_axis(self, shapes: list[tuple]) -> int:
        """The positive axis, after checking that the shapes agree off it."""
        dims = len(shapes[0])
        axis = shape.positive_axis(self.axis, dims)
        if not 0 <= axis < dims:
            raise ShapeError(f"Concat: axis {self.axis} out of range for {dims}-D blobs")
        first = shapes[0]
        for s in shapes[1:]:
            if len(s) != dims or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
                raise ShapeError(f"Concat along axis {self.axis}: shapes {list(shapes)} differ "
                                 f"off the concat axis")
        return axis

    def forward_cpu(self, bottoms, opt):
        axis = self._concat_axis([b.shape for b in bottoms])
        if len(bottoms) == 1:
            return [bottoms[0]]
        return [np.concatenate(bottoms, axis=axis)]

    def forward_gpu(self, bottoms, cmd, opt):
        shapes = [b.numpy_shape() for b in bottoms]
        axis = self._concat_axis(shapes)
        if len(bottoms) == 1:
            return [gather.view(bottoms[0], shapes[0])]
        out_shape = list(shapes[0])
        out_shape[axis] = sum(s[axis] for s in shapes)
        # a non-empty input tells the storage precision (an empty upload may be fp32 in fp16
        # storage: a first, empty KV cache)
        ref = next((b for b in bottoms if b.total()), bottoms[0])
        top = gather.new_like_shape(out_shape, gather.copy_elempack(out_shape, opt, bottoms),
                                    ref.scalar_size(), cmd, opt)
        out_strides = gather.c_strides(out_shape)
        offset = 0
        for b, s in zip(bottoms, shapes):
            gather.record_strided_copy(cmd, b, top, s, gather.c_strides(s), out_strides,
                                       dst_base=offset * out_strides[axis])
            offset += s[axis]
        return [top]
