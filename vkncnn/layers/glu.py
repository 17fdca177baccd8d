"""GLU: split the blob in two halves along `axis` (0, default 0; negative counts from the
end; a 1-D blob is always split along w) and gate the first with the sigmoid of the second.

Dims 1-4, as ncnn. An odd extent along the axis splits as ncnn does: each half has
extent // 2 entries and the last entry gates nothing.
"""

from vkncnn.cpu_fallback import tensor_ops
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("GLU")
class GLU(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if not 1 <= x.ndim <= 4:
            raise ShapeError(f"GLU {self.name!r} takes a 1-4 dim blob (as ncnn), got {x.ndim}-D {x.shape}")
        axis = 0 if x.ndim == 1 else (self.axis + x.ndim if self.axis < 0 else self.axis)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"GLU {self.name!r}: axis (0) {self.axis} is outside a {x.ndim}-D blob {x.shape}")
        return [tensor_ops.glu(x, axis)]
