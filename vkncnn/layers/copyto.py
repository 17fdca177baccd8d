"""CopyTo: write the second blob into a copy of the first at an offset (ONNX/pnnx slice-assign).

Params: 0 woffset 0, 1 hoffset 0, 13 doffset 0, 2 coffset 0, or numpy-style 9 starts []
with 11 axes [] (axes over the first blob's numpy shape, negative allowed; -233 or a
negative start count from the end). If both blobs have the same shape the output is
the second blob. The second blob must fit inside the first at the offset (ncnn would
write out of bounds).
"""

import numpy as np

from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


def _cdhw(shape: tuple) -> tuple[int, int, int, int]:
    """ncnn's (c, d, h, w) of a numpy shape: absent sizes are 1."""
    n = len(shape)
    return (shape[0] if n >= 3 else 1, shape[1] if n == 4 else 1, shape[-2] if n >= 2 else 1, shape[-1])


@register_layer("CopyTo")
class CopyTo(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.woffset = pd.get(0, 0)
        self.hoffset = pd.get(1, 0)
        self.doffset = pd.get(13, 0)
        self.coffset = pd.get(2, 0)
        self.starts = pd.get(9, np.zeros(0, np.int32)).astype(np.int64).ravel()
        self.axes = pd.get(11, np.zeros(0, np.int32)).astype(np.int64).ravel()
        return 0

    def _offsets(self, shape: tuple) -> list[int]:
        """Offsets along (c, d, h, w)."""
        dims = len(shape)
        if self.starts.size == 0:
            return [self.coffset, self.doffset, self.hoffset, self.woffset]
        axes = self.axes if self.axes.size else np.arange(min(dims, self.starts.size))
        if axes.size > self.starts.size:
            raise ShapeError(f"CopyTo {self.name!r}: {axes.size} axes but only {self.starts.size} starts")
        # numpy axis a of a dims-D blob is ncnn's (c, d, h, w) slot slot_of[dims][a]
        slot_of = {1: [3], 2: [2, 3], 3: [0, 2, 3], 4: [0, 1, 2, 3]}[dims]
        offsets = [0, 0, 0, 0]
        for a, start in zip(axes, self.starts):
            a = int(a) + dims if a < 0 else int(a)
            if not 0 <= a < dims:
                raise ShapeError(f"CopyTo {self.name!r}: axis {a} out of range for a {dims}-D blob {shape}")
            start = 0 if start == -233 else int(start)
            offsets[slot_of[a]] = start if start >= 0 else shape[a] + start
        return offsets

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) < 2:
            raise ShapeError(f"CopyTo {self.name!r} needs 2 bottoms (destination, source), got {len(bottoms)}")
        dst, src = bottoms[0], bottoms[1]
        if dst.shape == src.shape:
            return [np.array(src, copy=True)]
        if src.ndim > dst.ndim:
            raise ShapeError(f"CopyTo {self.name!r}: source {src.shape} has more dims than destination {dst.shape}")
        out = np.array(dst, copy=True)
        view = out.reshape(_cdhw(dst.shape))
        size = _cdhw(src.shape)
        offsets = self._offsets(dst.shape)
        for o, n, limit, axis in zip(offsets, size, view.shape, "cdhw"):
            if o < 0 or o + n > limit:
                raise ShapeError(f"CopyTo {self.name!r}: source {src.shape} at {axis} offset {o} does not fit in "
                                 f"destination {dst.shape} ({axis} extent {limit})")
        c, d, h, w = offsets
        view[c:c + size[0], d:d + size[1], h:h + size[2], w:w + size[3]] = np.asarray(src).reshape(size)
        return [out]
