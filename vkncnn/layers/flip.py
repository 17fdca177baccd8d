"""Flip: reverse the blob along each of `axes` (0, int array; negative counts from the
end). No axes: the blob passes unchanged; a 1-D blob is reversed whatever the axes say,
as ncnn does."""

from vkncnn.cpu_fallback import tensor_ops
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Flip")
class Flip(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.axes = [int(a) for a in pd.get_int_array(0)]
        if len(self.axes) > 4:
            raise ParamError(f"Flip axes (0) {self.axes}: at most 4 axes, a blob has at most 4 dims")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if not self.axes:
            return [x]
        if x.ndim == 1:
            return [tensor_ops.flip(x, (0,))]
        axes = set()
        for a in self.axes:
            p = a + x.ndim if a < 0 else a
            if not 0 <= p < x.ndim:
                raise ShapeError(f"Flip {self.name!r}: axis {a} of axes (0) {self.axes} is outside a "
                                 f"{x.ndim}-D blob {x.shape}")
            axes.add(p)
        return [tensor_ops.flip(x, tuple(sorted(axes)))]
