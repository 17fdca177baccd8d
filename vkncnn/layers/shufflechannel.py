"""ShuffleChannel: ShuffleNet's channel shuffle.

View the c channels as a (group, c/group) grid and read it column by column: output
channel i*group + j = input channel j*(c/group) + i. reverse=1 undoes it (the grid is
(c/group, group)). Works on the channel axis of 3-D and 4-D blobs.

GPU: a strided copy (shaders/gather.comp) over (c/group, group, rest) that reads the
channel grid transposed.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("ShuffleChannel")
class ShuffleChannel(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.group = pd.get(0, 1)
        self.reverse = pd.get(1, 0)
        if self.group <= 0:
            raise ParamError(f"ShuffleChannel: group {self.group} must be positive")
        return 0

    def _group(self, in_shape: tuple) -> int:
        if len(in_shape) not in (3, 4):
            raise ShapeError(f"ShuffleChannel takes a 3-D or 4-D blob, got shape {in_shape}")
        c = in_shape[0]
        if c == 0 or c % self.group != 0:
            raise ShapeError(f"ShuffleChannel: {c} channels do not split into {self.group} groups")
        return c // self.group if self.reverse else self.group

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        return [shape.shuffle_channels(x, self._group(x.shape))]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape = x.numpy_shape()
        group = self._group(in_shape)
        c, rest = in_shape[0], int(np.prod(in_shape[1:]))
        per = c // group
        top = gather.new_like_shape(in_shape, gather.output_elempack(in_shape, opt), x.scalar_size(), cmd, opt)
        # output channel i*group + j = input channel j*per + i
        gather.record_strided_copy(cmd, x, top, [per, group, rest], [rest, per * rest, 1],
                                   [group * rest, rest, 1])
        return [top]
