"""Permute: reorder the axes of a 2-D, 3-D or 4-D blob.

ncnn names each order innermost-first ("CWH": out w = in c, out h = in w, out c = in h);
order_type 0-5 are the 3-D orders (0-1 for 2-D: WH, HW), 0-23 the 4-D ones. For 3-D and
4-D blobs ncnn gives 0-5 the same letters with D inserted, e.g. 3 = CWH / DWHC.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Permute")
class Permute(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.order_type = pd.get(0, 0)
        if not 0 <= self.order_type < len(shape.PERMUTE_ORDERS_4D):
            raise ParamError(f"Permute: order_type {self.order_type} is not 0-23")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 1:
            return [x]
        if x.ndim == 2:
            names = ("WH", "HW")
        elif x.ndim == 3:
            names = shape.PERMUTE_ORDERS_3D
        elif x.ndim == 4:
            names = shape.PERMUTE_ORDERS_4D
        else:
            raise ShapeError(f"Permute takes a 1-D to 4-D blob, got shape {x.shape}")
        if self.order_type >= len(names):
            raise ShapeError(f"Permute: order_type {self.order_type} does not exist for a {x.ndim}-D blob "
                             f"(0-{len(names) - 1})")
        axes = shape.permute_axes(names[self.order_type])
        if axes == tuple(range(x.ndim)):
            return [x]
        return [np.ascontiguousarray(x.transpose(axes))]
