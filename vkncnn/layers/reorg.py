"""Reorg: space to depth (YOLOv2's passthrough), (c, h, w) -> (c*s^2, h/s, w/s).

mode 0: output channel = c * s^2 + sub_y * s + sub_x; mode 1: (sub_y * s + sub_x) * C + c.
Rows and columns beyond a multiple of the stride are dropped. As in ncnn, a 2-D input is
one channel and a 4-D input is read as its first depth slice.

GPU: a strided copy (shaders/gather.comp) over (c, s, s, h/s, w/s) (mode 0) or
(s, s, c, h/s, w/s) (mode 1) reading the input's rows and columns with stride s.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Reorg")
class Reorg(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.stride = pd.get(0, 1)
        self.mode = pd.get(1, 0)
        if self.stride <= 0:
            raise ParamError(f"Reorg: stride {self.stride} must be positive")
        return 0

    def _geometry(self, in_shape: tuple) -> tuple[int, int, int, int]:
        """(channels, h, w, channel stride) of the (c, h, w) image ncnn reads."""
        if len(in_shape) == 2:
            c, h, w, cs = 1, in_shape[0], in_shape[1], in_shape[0] * in_shape[1]  # one channel
        elif len(in_shape) in (3, 4):
            c, h, w, cs = in_shape[0], in_shape[-2], in_shape[-1], int(np.prod(in_shape[1:]))
        else:
            raise ShapeError(f"Reorg takes a 2-D to 4-D blob, got shape {in_shape}")
        if h < self.stride or w < self.stride:
            raise ShapeError(f"Reorg: input {(c, h, w)} is smaller than the stride {self.stride}")
        return c, h, w, cs

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        c, h, w, _ = self._geometry(x.shape)
        if x.ndim == 4:
            x = x[:, 0]  # ncnn reads each channel as one h x w image: the first depth slice
        return [shape.reorg(x.reshape(c, h, w), self.stride, self.mode)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        c, h, w, cs = self._geometry(x.numpy_shape())
        s = self.stride
        oh, ow = h // s, w // s
        out_shape = (c * s * s, oh, ow)
        if self.mode == 0:   # output channel = q * s*s + sy * s + sx
            extents, src = [c, s, s, oh, ow], [cs, w, 1, s * w, s]
        else:                # output channel = (sy * s + sx) * c + q
            extents, src = [s, s, c, oh, ow], [w, 1, cs, s * w, s]
        top = gather.new_like_shape(out_shape, gather.output_elempack(out_shape, opt), x.scalar_size(), cmd, opt)
        gather.record_strided_copy(cmd, x, top, extents, src, gather.c_strides(tuple(extents)))
        return [top]
