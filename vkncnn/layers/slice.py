"""Slice: cut a blob into consecutive pieces along one axis (numpy-style over (c,[d],h,w)).

Piece sizes come from `slices` (-233 = an even share of what is left over the pieces
left) or from `indices`, the cut points (negative from the end; the last piece takes
the rest).

GPU: one strided copy (shaders/gather.comp) per piece; a piece that is the whole input
is a view of it.
"""

import itertools

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer

EVEN_SHARE = -233


@register_layer("Slice")
class Slice(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copies read either elempack

    def load_param(self, pd) -> int:
        self.slices = pd.get_int_array(0)
        self.axis = pd.get(1, 0)
        self.indices = pd.get_int_array(2)
        return 0

    def _sizes(self, n: int, n_out: int) -> list[int]:
        sizes, taken = [], 0
        for i in range(n_out):
            if len(self.indices):
                if i == n_out - 1:
                    size = n - taken
                else:
                    if i >= len(self.indices):
                        raise ShapeError(f"Slice: {n_out} outputs but only {len(self.indices)} indices")
                    cut = int(self.indices[i])
                    size = (n + cut if cut < 0 else cut) - taken
            else:
                if i >= len(self.slices):
                    raise ShapeError(f"Slice: {n_out} outputs but only {len(self.slices)} slices")
                size = int(self.slices[i])
                if size == EVEN_SHARE:
                    size = (n - taken) // (n_out - i)
            sizes.append(size)
            taken += size
        return sizes

    def _bounds(self, in_shape: tuple) -> tuple[int, list[int]]:
        """(positive axis, piece boundaries [0, ..., end]) for an input of `in_shape`."""
        axis = shape.positive_axis(self.axis, len(in_shape))
        if not 0 <= axis < len(in_shape):
            raise ShapeError(f"Slice: axis {self.axis} out of range for a {len(in_shape)}-D blob {in_shape}")
        n = in_shape[axis]
        n_out = len(self.tops) if self.tops else max(len(self.slices), len(self.indices) + 1)
        sizes = self._sizes(n, n_out)
        if any(s <= 0 for s in sizes) or sum(sizes) > n:
            raise ShapeError(f"Slice: pieces {sizes} do not fit extent {n} of axis {self.axis} in {in_shape}")
        return axis, [int(b) for b in np.cumsum([0] + sizes)]

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        axis, bounds = self._bounds(x.shape)
        index = [slice(None)] * x.ndim
        tops = []
        for lo, hi in itertools.pairwise(bounds):
            index[axis] = slice(lo, hi)
            tops.append(np.ascontiguousarray(x[tuple(index)]))
        return tops

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape = x.numpy_shape()
        axis, bounds = self._bounds(in_shape)
        in_strides = gather.c_strides(in_shape)
        tops = []
        for lo, hi in itertools.pairwise(bounds):
            out_shape = list(in_shape)
            out_shape[axis] = hi - lo
            if tuple(out_shape) == in_shape:
                tops.append(gather.view(x, in_shape))
                continue
            top = gather.new_like_shape(out_shape, gather.copy_elempack(out_shape, opt, [x]), x.scalar_size(), cmd, opt)
            gather.record_strided_copy(cmd, x, top, out_shape, in_strides, gather.c_strides(out_shape),
                                       src_base=lo * in_strides[axis])
            tops.append(top)
        return tops
