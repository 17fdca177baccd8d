"""Concat: join blobs of the same dims along one axis.

The axis is numpy-style over (c,[d],h,w), negative counting from the end; every other
extent must agree.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Concat")
class Concat(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        dims = bottoms[0].ndim
        axis = shape.positive_axis(self.axis, dims)
        if not 0 <= axis < dims:
            raise ShapeError(f"Concat: axis {self.axis} out of range for {dims}-D blobs")
        for b in bottoms[1:]:
            if b.ndim != dims or b.shape[:axis] + b.shape[axis + 1:] != bottoms[0].shape[:axis] + bottoms[0].shape[axis + 1:]:
                raise ShapeError(f"Concat along axis {self.axis}: shapes {[x.shape for x in bottoms]} differ "
                                 f"off the concat axis")
        if len(bottoms) == 1:
            return [bottoms[0]]
        return [np.concatenate(bottoms, axis=axis)]
