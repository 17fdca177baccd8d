"""Tile: repeat a blob along its axes.

Either `tiles` copies along one `axis` (numpy-style over (c,[d],h,w), non-negative), or
`repeats` gives numpy.tile repeats for the trailing axes. More repeats than dims promote
the blob first: by leading 1s (numpy), except that a 3-D blob with 4 repeats gets its
depth of 1 between c and h (the way ncnn sees a 3-D blob as 4-D).
"""

import numpy as np

from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Tile")
class Tile(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        self.tiles = pd.get(1, 1)
        self.repeats = pd.get_int_array(2)
        if self.axis < 0:
            raise ParamError(f"Tile: axis {self.axis} must not be negative")
        if len(self.repeats) > 4:
            raise ParamError(f"Tile: {len(self.repeats)} repeats, at most 4 (ncnn blobs have 4 dims)")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if len(self.repeats) == 0:
            if self.axis >= x.ndim:
                raise ShapeError(f"Tile: axis {self.axis} out of range for a {x.ndim}-D blob {x.shape}")
            reps = [1] * x.ndim
            reps[self.axis] = self.tiles
        else:
            reps = [int(r) for r in self.repeats]
            if len(reps) == 4 and x.ndim == 3:
                x = x[:, None]  # (c, h, w) -> (c, 1, h, w)
        if min(reps) <= 0:
            raise ShapeError(f"Tile: repeats {reps} must be positive")
        return [np.tile(x, reps).astype(np.float32, copy=False)]
