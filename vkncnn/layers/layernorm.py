"""LayerNorm: (x - mean) / sqrt(var + eps) * gamma + beta.

What is normalised together follows ncnn: a 1-D blob whole, each row of a 2-D blob;
for 3-D/4-D blobs each row when affine_size == w, each (h, w) plane of a 4-D blob when
affine_size == w * h, else each channel. gamma/beta have affine_size values.

GPU: a row reduction to (count, mean, M2) merged as Chan's parallel variance, turned into
a = 1 / sqrt(var + eps), b = -mean * a per row (reduction_rows.comp), then
normalize_rows.comp writes (x * a + b) * gamma[j] + beta[j], j the position in the row.
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.layer import Layer, register_layer


@register_layer("LayerNorm")
class LayerNorm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.affine_size = pd.get(0, 0)
        self.eps = pd.get(1, 0.001)
        self.affine = pd.get(2, 1)
        return 0

    def load_model(self, mb) -> int:
        self.gamma_data = self.beta_data = None
        if self.affine:
            self.gamma_data = mb.load(self.affine_size, 1)
            self.beta_data = mb.load(self.affine_size, 1)
        return 0

    def _group_size(self, shape: tuple) -> int:
        """How many innermost elements are normalised together."""
        w = shape[-1]
        if len(shape) <= 2 or self.affine_size == w:
            return w
        if len(shape) == 4 and self.affine_size == w * shape[-2]:
            return w * shape[-2]
        return int(np.prod(shape[1:]))

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        inner = self._group_size(x.shape)
        if self.affine and self.affine_size != inner:
            raise ShapeError(f"LayerNorm affine_size {self.affine_size} does not match the "
                             f"{inner} elements normalised together in input {x.shape}")
        return [norm.layernorm(x, inner, self.eps, self.gamma_data, self.beta_data)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        self.normalizer = rows.moments_normalizer(self, opt, affine_index=1)
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gamma_beta_gpu = rows.upload_gamma_beta(self, cmd, opt)
        return 0

    @staticmethod
    def _row_axes(shape: tuple, inner: int) -> tuple:
        """The innermost numpy axes holding the `inner` elements normalised together."""
        ndim = len(shape)
        if ndim == 1:
            return (0,)
        if inner == shape[-1]:
            return (ndim - 1,)
        if ndim == 4 and inner == shape[-1] * shape[-2]:
            return (2, 3)
        return tuple(range(1, ndim))

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        if 0 in shape:  # nothing to normalise, no rows to dispatch (as on the CPU)
            return [x]
        inner = self._group_size(shape)
        if self.affine and self.affine_size != inner:
            raise ShapeError(f"LayerNorm affine_size {self.affine_size} does not match the "
                             f"{inner} elements normalised together in input {shape}")
        layout = rows.numpy_axes_layout(x, self._row_axes(shape, inner))
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_beta_gpu)]
