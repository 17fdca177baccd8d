"""Slice: cut a blob into consecutive pieces along one axis (numpy-style over (c,[d],h,w)).

Piece sizes come from `slices` (-233 = an even share of what is left over the pieces
left) or from `indices`, the cut points (negative from the end; the last piece takes
the rest).
"""

import itertools

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer

EVEN_SHARE = -233


@register_layer("Slice")
class Slice(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

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

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        axis = shape.positive_axis(self.axis, x.ndim)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"Slice: axis {self.axis} out of range for a {x.ndim}-D blob {x.shape}")
        n = x.shape[axis]
        n_out = len(self.tops) if self.tops else max(len(self.slices), len(self.indices) + 1)
        sizes = self._sizes(n, n_out)
        if any(s <= 0 for s in sizes) or sum(sizes) > n:
            raise ShapeError(f"Slice: pieces {sizes} do not fit extent {n} of axis {self.axis} in {x.shape}")
        bounds = np.cumsum([0] + sizes)
        index = [slice(None)] * x.ndim
        tops = []
        for lo, hi in itertools.pairwise(bounds):
            index[axis] = slice(int(lo), int(hi))
            tops.append(np.ascontiguousarray(x[tuple(index)]))
        return tops
