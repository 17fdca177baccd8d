"""Tile: repeat a blob along its axes.

Either `tiles` copies along one `axis` (numpy-style over (c,[d],h,w), non-negative), or
`repeats` gives numpy.tile repeats for the trailing axes. More repeats than dims promote
the blob first: by leading 1s (numpy), except that a 3-D blob with 4 repeats gets its
depth of 1 between c and h (the way ncnn sees a 3-D blob as 4-D).

GPU: one strided copy (shaders/gather.comp) over (repeat, extent) axis pairs: the repeat
axes read the input with stride 0.
"""

import numpy as np

from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("Tile")
class Tile(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        self.tiles = pd.get(1, 1)
        self.repeats = pd.get_int_array(2)
        if self.axis < 0:
            raise ParamError(f"Tile: axis {self.axis} must not be negative")
        if len(self.repeats) > 4:
            raise ParamError(f"Tile: {len(self.repeats)} repeats, at most 4 (ncnn blobs have 4 dims)")
        return 0

    def _plan(self, in_shape: tuple) -> tuple[tuple, list[int]]:
        """(input shape as tiled, repeats per axis)."""
        if len(self.repeats) == 0:
            if self.axis >= len(in_shape):
                raise ShapeError(f"Tile: axis {self.axis} out of range for a {len(in_shape)}-D blob {in_shape}")
            reps = [1] * len(in_shape)
            reps[self.axis] = self.tiles
        else:
            reps = [int(r) for r in self.repeats]
            if len(reps) == 4 and len(in_shape) == 3:
                in_shape = (in_shape[0], 1) + tuple(in_shape[1:])  # (c, h, w) -> (c, 1, h, w)
        if min(reps) <= 0:
            raise ShapeError(f"Tile: repeats {reps} must be positive")
        return tuple(in_shape), reps

    @staticmethod
    def _out_shape(in_shape: tuple, reps: list[int]) -> tuple:
        """numpy.tile's result: more repeats than dims promote the shape with leading 1s."""
        ndim = max(len(in_shape), len(reps))
        in_shape = (1,) * (ndim - len(in_shape)) + tuple(in_shape)
        reps = [1] * (ndim - len(reps)) + list(reps)
        return tuple(n * r for n, r in zip(in_shape, reps))

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        in_shape, reps = self._plan(x.shape)
        check_alloc(opt, self._out_shape(in_shape, reps), 4, "the tiled output")
        return [np.tile(x.reshape(in_shape), reps).astype(np.float32, copy=False)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape, reps = self._plan(x.numpy_shape())
        # numpy.tile promotes with leading 1s when there are more repeats than dims
        ndim = max(len(in_shape), len(reps))
        in_shape = (1,) * (ndim - len(in_shape)) + in_shape
        reps = [1] * (ndim - len(reps)) + reps
        out_shape = self._out_shape(in_shape, reps)
        if out_shape == tuple(x.numpy_shape()):
            return [gather.view(x, out_shape)]
        check_alloc(opt, out_shape, x.scalar_size(), "the tiled output")
        in_strides, out_strides = gather.c_strides(in_shape), gather.c_strides(out_shape)
        extents, src, dst = [], [], []
        for n, r, si, so in zip(in_shape, reps, in_strides, out_strides):
            extents += [r, n]          # output index along this axis = copy * n + i
            src += [0, si]
            dst += [n * so, so]
        top = gather.new_like_shape(out_shape, gather.copy_elempack(out_shape, opt, [x]), x.scalar_size(), cmd, opt)
        gather.record_strided_copy(cmd, x, top, extents, src, dst)
        return [top]
