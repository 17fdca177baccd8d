"""Reduction: reduce a blob over some axes with one of 11 operations:
0 sum, 1 asum, 2 sumsq, 3 mean, 4 max, 5 min, 6 prod, 7 L1, 8 L2, 9 logsum, 10 logsumexp;
the result is multiplied by coeff.

reduce_all=1 reduces every axis; otherwise `axes` lists numpy axes ((c, d, h, w)
order, negatives allowed). keepdims keeps reduced axes as size 1; without it the
remaining axes keep their order and a full reduction gives a (1,) blob. fixbug0=1 is
required whenever axes is given (ncnn rejects older params, whose axes counted a batch axis).

GPU: one row reducer pass (reduction_rows.comp, see vkncnn/gpu/ops/row_reduction.py; two passes for long
rows) whose rows are the kept coordinates; the final op (log, sqrt, coeff) is applied as
each result is stored. Every op, any axes, keepdims, dims 1-4, pack1 or pack4.
"""

import numpy as np

from vkncnn.cpu_fallback import reduction
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.layer import Layer, register_layer

# operation -> (what the reducer accumulates, what it applies to the total)
_GPU_OP = {
    reduction.SUM: (rows.OP_SUM, rows.POST_NONE), reduction.ASUM: (rows.OP_ASUM, rows.POST_NONE),
    reduction.SUMSQ: (rows.OP_SUMSQ, rows.POST_NONE), reduction.MEAN: (rows.OP_SUM, rows.POST_NONE),
    reduction.MAX: (rows.OP_MAX, rows.POST_NONE), reduction.MIN: (rows.OP_MIN, rows.POST_NONE),
    reduction.PROD: (rows.OP_PROD, rows.POST_NONE), reduction.L1: (rows.OP_ASUM, rows.POST_NONE),
    reduction.L2: (rows.OP_SUMSQ, rows.POST_SQRT), reduction.LOGSUM: (rows.OP_SUM, rows.POST_LOG),
    reduction.LOGSUMEXP: (rows.OP_SUMEXP, rows.POST_LOG),
}


@register_layer("Reduction")
class Reduction(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.operation = pd.get(0, 0)
        self.reduce_all = pd.get(1, 1)
        self.coeff = pd.get(2, 1.0)
        self.axes = [int(a) for a in pd.get(3, np.zeros(0, np.int32))]
        self.keepdims = pd.get(4, 0)
        self.fixbug0 = pd.get(5, 0)
        if not 0 <= self.operation < len(reduction.OP_NAMES):
            raise ParamError(f"Reduction operation {self.operation} is not one of 0-10 "
                             f"({', '.join(reduction.OP_NAMES)})")
        if self.fixbug0 == 0 and self.axes:
            raise ParamError("Reduction with axes and fixbug0=0: the param is too old, please "
                             "regenerate it (ncnn refuses it too)")
        return 0

    def _axes(self, shape: tuple) -> tuple:
        ndim = len(shape)
        if not self.reduce_all and ndim > 1:
            bad = [a for a in self.axes if not -ndim <= a < ndim]
            if bad:
                raise ShapeError(f"Reduction axes {bad} are out of range for input {shape}")
            if not self.axes:
                raise ParamError("Reduction with reduce_all=0 needs axes")
        return reduction.reduced_axes(ndim, bool(self.reduce_all), self.axes)

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        axes = self._axes(x.shape)
        return [reduction.reduction(x, self.operation, axes, bool(self.keepdims), self.coeff)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        op, post = _GPU_OP[self.operation]
        self.reducer = rows.RowReducer(self.vkdev, opt, op, rows.FIN_REDUCTION, post=post)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        axes = self._axes(shape)
        coeff = np.float32(self.coeff)
        if self.operation == reduction.MEAN:  # the same float32 steps as the numpy path
            coeff = np.float32(coeff / np.float32(int(np.prod([shape[a] for a in axes]))))
        # The reducer numbers rows in packed order of the kept axes and stores row g's result
        # at scalar g of the output. With axis 0 kept that order is the output's own layout
        # at the input's elempack (axis 0 stays the output's packing axis); with axis 0
        # reduced the kept axes are plain numpy order, which is the pack1 layout.
        elempack = x.elempack if 0 not in axes else 1
        top = VkMat.for_numpy_shape(reduction.output_shape(shape, axes, bool(self.keepdims)), elempack,
                                    x.scalar_size(), cmd.blob_allocator(opt))
        layout = rows.numpy_axes_layout(x, axes)
        if layout.rows:  # no row (an empty kept axis): an empty result, nothing to dispatch
            self.reducer.record(cmd, opt, x, layout, top=top, coeff=float(coeff))
        return [top]
