"""Permute: reorder the axes of a 2-D, 3-D or 4-D blob.

ncnn names each order innermost-first ("CWH": out w = in c, out h = in w, out c = in h);
order_type 0-5 are the 3-D orders (0-1 for 2-D: WH, HW), 0-23 the 4-D ones. For 3-D and
4-D blobs ncnn gives 0-5 the same letters with D inserted, e.g. 3 = CWH / DWHC.

GPU: a strided copy whose source strides are the input's, taken in the new order
(shaders/gather.comp); orders that keep the channel axis first move whole vec4 items.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Permute")
class Permute(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.order_type = pd.get(0, 0)
        if not 0 <= self.order_type < len(shape.PERMUTE_ORDERS_4D):
            raise ParamError(f"Permute: order_type {self.order_type} is not 0-23")
        return 0

    def _axes(self, ndim: int, in_shape: tuple) -> tuple:
        """numpy transpose axes for this order on an `ndim`-D blob."""
        if ndim == 1:
            return (0,)
        if ndim == 2:
            names = ("WH", "HW")
        elif ndim == 3:
            names = shape.PERMUTE_ORDERS_3D
        elif ndim == 4:
            names = shape.PERMUTE_ORDERS_4D
        else:
            raise ShapeError(f"Permute takes a 1-D to 4-D blob, got shape {in_shape}")
        if self.order_type >= len(names):
            raise ShapeError(f"Permute: order_type {self.order_type} does not exist for a {ndim}-D blob "
                             f"(0-{len(names) - 1})")
        return shape.permute_axes(names[self.order_type])

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        axes = self._axes(x.ndim, x.shape)
        if axes == tuple(range(x.ndim)):
            return [x]
        return [np.ascontiguousarray(x.transpose(axes))]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape = x.numpy_shape()
        axes = self._axes(len(in_shape), in_shape)
        if axes == tuple(range(len(in_shape))):
            return [gather.view(x, in_shape)]
        out_shape = tuple(in_shape[a] for a in axes)
        moved = [a for a in axes if in_shape[a] != 1]
        if moved == sorted(moved):  # only axes of size 1 move (a decode step's one token): C order
            return [gather.reshape_to(x, out_shape, cmd, opt)]  # is unchanged, a view where bytes agree
        in_strides = gather.c_strides(in_shape)
        top = gather.new_like_shape(out_shape, gather.output_elempack(out_shape, opt), x.scalar_size(), cmd, opt)
        gather.record_strided_copy(cmd, x, top, out_shape, [in_strides[a] for a in axes],
                                   gather.c_strides(out_shape))
        return [top]
