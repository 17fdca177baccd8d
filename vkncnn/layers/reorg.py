"""Reorg: space to depth (YOLOv2's passthrough), (c, h, w) -> (c*s^2, h/s, w/s).

mode 0: output channel = c * s^2 + sub_y * s + sub_x; mode 1: (sub_y * s + sub_x) * C + c.
Rows and columns beyond a multiple of the stride are dropped. As in ncnn, a 2-D input is
one channel and a 4-D input is read as its first depth slice.
"""

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Reorg")
class Reorg(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.stride = pd.get(0, 1)
        self.mode = pd.get(1, 0)
        if self.stride <= 0:
            raise ParamError(f"Reorg: stride {self.stride} must be positive")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 2:
            x = x[None]  # one channel
        elif x.ndim == 4:
            x = x[:, 0]  # ncnn reads each channel as one h x w image: the first depth slice
        if x.ndim != 3:
            raise ShapeError(f"Reorg takes a 2-D to 4-D blob, got shape {bottoms[0].shape}")
        if x.shape[1] < self.stride or x.shape[2] < self.stride:
            raise ShapeError(f"Reorg: input {x.shape} is smaller than the stride {self.stride}")
        return [shape.reorg(x, self.stride, self.mode)]
