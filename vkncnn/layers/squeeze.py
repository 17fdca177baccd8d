"""Squeeze: drop axes of extent 1.

Which axes: the flags squeeze_w/h/d/c, or `axes` (numpy-style over (c,[d],h,w),
negative from the end; an axis the blob does not have is ignored, as ncnn does). Only axes
of extent 1 go; squeezing everything leaves shape [1].

GPU: a view of the same buffer when the bytes agree (always in elempack 1), else a
repacking copy (shaders/gather.comp).
"""

from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer

LETTERS = {1: "w", 2: "hw", 3: "chw", 4: "cdhw"}


@register_layer("Squeeze")
class Squeeze(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # a view or a copy, from either elempack

    def load_param(self, pd) -> int:
        self.flags = {"w": pd.get(0, 0), "h": pd.get(1, 0), "d": pd.get(11, 0), "c": pd.get(2, 0)}
        self.axes = pd.get_int_array(3)
        return 0

    def _out_shape(self, in_shape: tuple) -> tuple:
        ndim = len(in_shape)
        if not 1 <= ndim <= 4:
            raise ShapeError(f"Squeeze takes a 1-D to 4-D blob, got shape {in_shape}")
        if len(self.axes):
            chosen = set()
            for a in self.axes:
                a = int(a) + ndim if a < 0 else int(a)
                if 0 <= a < ndim:  # ncnn ignores an axis the blob does not have
                    chosen.add(a)
        else:
            chosen = {i for i, letter in enumerate(LETTERS[ndim]) if self.flags[letter]}
        kept = tuple(n for i, n in enumerate(in_shape) if not (i in chosen and n == 1))
        return kept or (1,)

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        return [x.reshape(self._out_shape(x.shape))]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        return [gather.reshape_to(x, self._out_shape(x.numpy_shape()), cmd, opt)]
