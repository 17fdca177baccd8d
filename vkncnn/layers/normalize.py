"""Normalize (SSD's L2 normalisation): x / ||x|| * scale.

The norm runs across channels at each position (across_channel), across each
channel's spatial extent (across_spatial), or both. eps_mode places eps as
0 caffe: 1/sqrt(sum + eps), 1 pytorch: 1/max(sqrt(sum), eps), 2 tensorflow:
1/sqrt(max(sum, eps)). scale is one value (channel_shared) or one per channel.

GPU: the row reducer sums x^2 per row (a row = a position across channels, a channel,
or everything) and turns it into 1 / ||x|| (reduction_rows.comp); normalize_rows.comp
multiplies by it and the scale.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.layer import Layer, register_layer


@register_layer("Normalize")
class Normalize(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.across_spatial = pd.get(0, 0)
        self.across_channel = pd.get(4, 1)
        self.channel_shared = pd.get(1, 0)
        self.eps = pd.get(2, 0.0001)
        self.eps_mode = pd.get(9, 0)
        self.scale_data_size = pd.get(3, 0)
        return 0

    def load_model(self, mb) -> int:
        self.scale_data = mb.load(self.scale_data_size, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        channels = x.shape[0] if x.ndim >= 3 else 1
        need = 1 if self.channel_shared else channels
        if self.scale_data.size < need:
            raise ShapeError(f"Normalize has {self.scale_data.size} scales but needs {need} "
                             f"for input {x.shape}")
        return [norm.normalize(x, bool(self.across_spatial), bool(self.across_channel),
                               bool(self.channel_shared), self.eps, self.eps_mode, self.scale_data)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        # scale per channel (affine index 2) or one shared value (3): 1-D/2-D blobs are one
        # channel, so they take the shared form whatever channel_shared says
        self.normalizers = {
            index: rows.RowNormalizer(self.vkdev, opt, rows.OP_SUMSQ, rows.FIN_L2NORM, affine_index=index,
                                      eps_mode=self.eps_mode)
            for index in (2, 3)}
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.scale_gpu = cmd.record_upload(self.scale_data, opt) if self.scale_data.size else None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        channels = shape[0] if x.dims >= 3 else 1
        need = 1 if self.channel_shared else channels
        if self.scale_data.size < need:
            raise ShapeError(f"Normalize has {self.scale_data.size} scales but needs {need} "
                             f"for input {shape}")
        every = tuple(range(x.dims))
        if self.across_spatial and self.across_channel:
            axes = every
        elif self.across_spatial:
            axes = every[1:] if x.dims >= 3 else every  # each channel; 1-D/2-D are one channel
        elif self.across_channel:
            axes = (0,) if x.dims >= 3 else ()  # each position; in one channel each element alone
        else:
            return [cmd.record_clone(x, opt)]  # neither region: ncnn leaves the blob as it is
        layout = rows.numpy_axes_layout(x, axes)
        shared = self.channel_shared or x.dims < 3
        return [self.normalizers[3 if shared else 2].record(cmd, opt, x, layout, self.eps, self.scale_gpu)]
