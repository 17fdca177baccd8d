"""Squeeze: drop axes of extent 1.

Which axes: the flags squeeze_w/h/d/c, or `axes` (numpy-style over (c,[d],h,w),
negative from the end). Only axes of extent 1 go; squeezing everything leaves shape [1].
"""

from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer

LETTERS = {1: "w", 2: "hw", 3: "chw", 4: "cdhw"}


@register_layer("Squeeze")
class Squeeze(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.flags = {"w": pd.get(0, 0), "h": pd.get(1, 0), "d": pd.get(11, 0), "c": pd.get(2, 0)}
        self.axes = pd.get_int_array(3)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if not 1 <= x.ndim <= 4:
            raise ShapeError(f"Squeeze takes a 1-D to 4-D blob, got shape {x.shape}")
        if len(self.axes):
            chosen = set()
            for a in self.axes:
                a = int(a) + x.ndim if a < 0 else int(a)
                if not 0 <= a < x.ndim:
                    raise ShapeError(f"Squeeze: axis {a} out of range for a {x.ndim}-D blob {x.shape}")
                chosen.add(a)
        else:
            chosen = {i for i, letter in enumerate(LETTERS[x.ndim]) if self.flags[letter]}
        kept = tuple(n for i, n in enumerate(x.shape) if not (i in chosen and n == 1))
        return [x.reshape(kept or (1,))]
