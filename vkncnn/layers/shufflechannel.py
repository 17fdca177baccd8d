"""ShuffleChannel: ShuffleNet's channel shuffle.

View the c channels as a (group, c/group) grid and read it column by column: output
channel i*group + j = input channel j*(c/group) + i. reverse=1 undoes it (the grid is
(c/group, group)). Works on the channel axis of 3-D and 4-D blobs.
"""

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("ShuffleChannel")
class ShuffleChannel(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.group = pd.get(0, 1)
        self.reverse = pd.get(1, 0)
        if self.group <= 0:
            raise ParamError(f"ShuffleChannel: group {self.group} must be positive")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim not in (3, 4):
            raise ShapeError(f"ShuffleChannel takes a 3-D or 4-D blob, got shape {x.shape}")
        c = x.shape[0]
        if c % self.group != 0:
            raise ShapeError(f"ShuffleChannel: {c} channels do not split into {self.group} groups")
        group = c // self.group if self.reverse else self.group
        return [shape.shuffle_channels(x, group)]
