"""ArgMax: the flat indices of the `topk` (1, default 1) largest values of the whole blob,
largest first, as a (1, topk) blob; with out_max_val (0) a (2, topk) blob whose first row
holds the values and second the indices. Indices are float values, as ncnn writes them.

ncnn builds without ArgMax by default (the pip wheel has none): the semantics follow its
source (equal values: the larger index first).
"""

import numpy as np

from vkncnn.cpu_fallback import tensor_ops
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("ArgMax")
class ArgMax(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.out_max_val = pd.get(0, 0)
        self.topk = pd.get(1, 1)
        if self.topk <= 0:
            raise ParamError(f"ArgMax topk (1) must be positive, got {self.topk}")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if self.topk > x.size:
            raise ShapeError(f"ArgMax {self.name!r}: topk (1) {self.topk} exceeds the {x.size} values of "
                             f"blob {x.shape}")
        values, indices = tensor_ops.topk_argmax(x, self.topk)
        if self.out_max_val:
            return [np.stack([values, indices])]
        return [indices[None, :]]
