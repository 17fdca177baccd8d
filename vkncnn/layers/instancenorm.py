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
        if x.shape[0] != self.channels:
            raise ShapeError(f"InstanceNorm has {self.channels} channels, the input {x.shape} "
                             f"has {x.shape[0]}")
        return [norm.instancenorm(x, self.eps, self.gamma_data, self.beta_data)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        self.normalizer = rows.moments_normalizer(self, opt, affine_index=2)
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gamma_gpu, self.beta_gpu = rows.upload_gamma_beta(self, cmd, opt)
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        if x.dims < 3:
            raise ShapeError(f"InstanceNorm takes a 3-D or 4-D blob, got shape {shape}")
        if shape[0] != self.channels:
            raise ShapeError(f"InstanceNorm has {self.channels} channels, the input {shape} "
                             f"has {shape[0]}")
        layout = rows.numpy_axes_layout(x, range(1, x.dims))
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_gpu, self.beta_gpu)]
