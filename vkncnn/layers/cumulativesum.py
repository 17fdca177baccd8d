"""CumulativeSum: running sum along `axis` (0, default 0; negative counts from the end;
a 1-D blob always sums along w), dims 1-4."""

from vkncnn.cpu_fallback import tensor_ops
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("CumulativeSum")
class CumulativeSum(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        axis = 0 if x.ndim == 1 else (self.axis + x.ndim if self.axis < 0 else self.axis)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"CumulativeSum {self.name!r}: axis (0) {self.axis} is outside a {x.ndim}-D "
                             f"blob {x.shape}")
        return [tensor_ops.cumulative_sum(x, axis)]
