"""Reduction: reduce a blob over some axes with one of 11 operations:
0 sum, 1 asum, 2 sumsq, 3 mean, 4 max, 5 min, 6 prod, 7 L1, 8 L2, 9 logsum, 10 logsumexp;
the result is multiplied by coeff.

reduce_all=1 reduces every axis; otherwise `axes` lists numpy axes ((c, d, h, w)
order, negatives allowed). keepdims keeps reduced axes as size 1; without it the
remaining axes keep their order and a full reduction gives a (1,) blob. fixbug0=1 is
required whenever axes is given (ncnn rejects older params, whose axes counted a batch axis).
"""

import numpy as np

from vkncnn.cpu_fallback import reduction
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Reduction")
class Reduction(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

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

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if not self.reduce_all and x.ndim > 1:
            bad = [a for a in self.axes if not -x.ndim <= a < x.ndim]
            if bad:
                raise ShapeError(f"Reduction axes {bad} are out of range for input {x.shape}")
            if not self.axes:
                raise ParamError("Reduction with reduce_all=0 needs axes")
        axes = reduction.reduced_axes(x.ndim, bool(self.reduce_all), self.axes)
        return [reduction.reduction(x, self.operation, axes, bool(self.keepdims), self.coeff)]
