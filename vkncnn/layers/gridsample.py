"""GridSample: sample the input at the coordinates a grid gives (PyTorch's grid_sample).

Params: 0 sample_type (1 bilinear, 2 nearest, 3 bicubic; default 1), 1 padding_mode
(1 zeros, 2 border, 3 reflection; default 1), 2 align_corner 0, 3 permute_fusion 0.
Bottoms: the image (c, h, w) or volume (c, d, h, w), and the grid. The grid holds one
(x, y[, z]) triple per output point: (outh, outw, 2) / (outd, outh, outw, 3), or with
permute_fusion the coordinate axis first: (2, outh, outw) / (3, outd, outh, outw).
Bicubic exists for 2-D images only, as in ncnn.
"""

import numpy as np

from vkncnn.cpu_fallback import gridsample
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("GridSample")
class GridSample(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.sample_type = pd.get(0, 1)
        self.padding_mode = pd.get(1, 1)
        self.align_corner = pd.get(2, 0)
        self.permute_fusion = pd.get(3, 0)
        if self.sample_type not in (1, 2, 3):
            raise ParamError(f"GridSample sample_type (param 0) must be 1 bilinear, 2 nearest or 3 bicubic, "
                             f"got {self.sample_type}")
        if self.padding_mode not in (1, 2, 3):
            raise ParamError(f"GridSample padding_mode (param 1) must be 1 zeros, 2 border or 3 reflection, "
                             f"got {self.padding_mode}")
        return 0

    def _coords(self, grid: np.ndarray, ndim: int) -> list[np.ndarray]:
        """The x, y[, z] coordinate planes of the grid, each shaped like the output."""
        n = ndim - 1  # 2 coordinates for an image, 3 for a volume
        axis = 0 if self.permute_fusion else -1
        if grid.ndim != ndim or grid.shape[axis] != n:
            want = f"({n}, out...)" if self.permute_fusion else f"(out..., {n})"
            raise ShapeError(f"GridSample {self.name!r}: a {ndim}-D input needs a {ndim}-D grid shaped {want} "
                             f"(permute_fusion={self.permute_fusion}), got grid {grid.shape}")
        return [np.take(grid, i, axis=axis) for i in range(n)]

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) < 2:
            raise ShapeError(f"GridSample {self.name!r} needs 2 bottoms (input, grid), got {len(bottoms)}")
        x = np.asarray(bottoms[0], np.float32)
        grid = np.asarray(bottoms[1], np.float32)
        if x.ndim >= 3 and min(x.shape) == 0:
            raise ShapeError(f"GridSample {self.name!r}: input {x.shape} is empty, there is nothing to sample")
        align = bool(self.align_corner)
        if x.ndim == 3:
            gx, gy = self._coords(grid, 3)
            return [gridsample.sample_2d(x, gx, gy, self.sample_type, self.padding_mode, align)]
        if x.ndim == 4:
            if self.sample_type == gridsample.BICUBIC:
                raise ShapeError(f"GridSample {self.name!r}: bicubic sampling takes a 3-D (c, h, w) input, "
                                 f"got a 4-D volume {x.shape} (ncnn has no 3-D bicubic)")
            gx, gy, gz = self._coords(grid, 4)
            return [gridsample.sample_3d(x, gx, gy, gz, self.sample_type, self.padding_mode, align)]
        raise ShapeError(f"GridSample {self.name!r}: input must be 3-D (c, h, w) or 4-D (c, d, h, w), "
                         f"got shape {x.shape}")
