"""InstanceNorm: each channel of a 3-D/4-D blob normalised over its own (d, h, w):
(x - mean) / sqrt(var + eps), then gamma[c], beta[c] when affine.

GPU: per-channel (mean, var) by the row reducer (reduction_rows.comp), then
normalize_rows.comp applies them and the per-channel affine.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.layer import Layer, register_layer


@register_layer("InstanceNorm")
class InstanceNorm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.channels = pd.get(0, 0)
        self.eps = pd.get(1, 0.001)
        self.affine = pd.get(2, 1)
        return 0

    def load_model(self, mb) -> int:
        self.gamma_data = self.beta_data = None
        if self.affine:
            self.gamma_data = mb.load(self.channels, 1)
            self.beta_data = mb.load(self.channels, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim < 3:
            raise ShapeError(f"InstanceNorm takes a 3-D or 4-D blob, got shape {x.shape}")
        self._check_channels(x.shape)
        return [norm.instancenorm(x, self.eps, self.gamma_data, self.beta_data)]

    def _check_channels(self, shape: tuple) -> None:
        """Only gamma/beta fix the channel count: without affine any count goes (ncnn's own
        models write channels 0 then), with it the input must match them."""
        if self.affine and shape[0] != self.channels:
            raise ShapeError(f"InstanceNorm has {self.channels} channels of gamma/beta, the input {shape} "
                             f"has {shape[0]}")

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        self.normalizer = rows.moments_normalizer(self, opt, affine_index=2)
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gamma_beta_gpu = rows.upload_gamma_beta(self, cmd, opt)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        if x.dims < 3:
            raise ShapeError(f"InstanceNorm takes a 3-D or 4-D blob, got shape {shape}")
        self._check_channels(shape)
        layout = rows.numpy_axes_layout(x, range(1, x.dims))
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_beta_gpu)]
