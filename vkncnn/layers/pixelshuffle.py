"""PixelShuffle: depth to space, (c, h, w) -> (c/r^2, h*r, w*r).

mode 0 is PyTorch's nn.PixelShuffle (input channel = out_c * r^2 + sub_y * r + sub_x);
mode 1 reads the sub-pixel index first (input channel = (sub_y * r + sub_x) * out_c + c),
as TensorFlow's depth_to_space in DCR order. Like ncnn, a 4-D input is read as its
first depth slice.

GPU: a strided copy (shaders/gather.comp) over (c, h, r, w, r): the input's channel axis
split into (out_c, r, r) (mode 0) or (r, r, out_c) (mode 1), read in output order.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("PixelShuffle")
class PixelShuffle(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.upscale_factor = pd.get(0, 1)
        self.mode = pd.get(1, 0)
        if self.upscale_factor <= 0:
            raise ParamError(f"PixelShuffle: upscale_factor {self.upscale_factor} must be positive")
        return 0

    def _check(self, in_shape: tuple) -> None:
        r = self.upscale_factor
        if len(in_shape) not in (3, 4):
            raise ShapeError(f"PixelShuffle takes a 3-D blob, got shape {in_shape}")
        if in_shape[0] % (r * r) != 0:
            raise ShapeError(f"PixelShuffle: {in_shape[0]} channels are not a multiple of {r}^2")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 4:
            x = x[:, 0]  # ncnn reads each channel as one h x w image: the first depth slice
        self._check(x.shape)
        return [shape.pixel_shuffle(x, self.upscale_factor, self.mode)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape = x.numpy_shape()
        self._check(in_shape)
        r = self.upscale_factor
        c, h, w = in_shape[0], in_shape[-2], in_shape[-1]
        cs = int(np.prod(in_shape[1:]))  # channel stride (a 4-D blob: its first depth slice is read)
        oc = c // (r * r)
        out_shape = (oc, h * r, w * r)
        if self.mode == 0:   # input channel = q * r*r + sy * r + sx
            q_s, sy_s, sx_s = r * r * cs, r * cs, cs
        else:                # input channel = (sy * r + sx) * oc + q
            q_s, sy_s, sx_s = cs, r * oc * cs, oc * cs
        top = gather.new_like_shape(out_shape, gather.output_elempack(out_shape, opt), x.scalar_size(), cmd, opt)
        out_strides = gather.c_strides((oc, h, r, w, r))
        gather.record_strided_copy(cmd, x, top, [oc, h, r, w, r], [q_s, w, sy_s, 1, sx_s], out_strides)
        return [top]
