"""GroupNorm: channels split into `group` groups, each normalised over all its
elements, then gamma[c], beta[c] per channel when affine.

The channel axis is numpy axis 0: w of a 1-D blob, h of 2-D, c of 3-D/4-D.

GPU: per-group (mean, var) by the row reducer (a row = a run of whole channels,
reduction_rows.comp), then normalize_rows.comp with the per-channel affine. A pack4 input
whose groups are not whole items (channels per group not a multiple of 4) is repacked
to pack1 first.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.layer import Layer, register_layer


@register_layer("GroupNorm")
class GroupNorm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.group = pd.get(0, 1)
        self.channels = pd.get(1, 0)
        self.eps = pd.get(2, 0.001)
        self.affine = pd.get(3, 1)
        if self.group < 1 or self.channels % self.group != 0:
            raise ParamError(f"GroupNorm channels {self.channels} must split into {self.group} equal groups")
        return 0

    def load_model(self, mb) -> int:
        self.gamma_data = self.beta_data = None
        if self.affine:
            self.gamma_data = mb.load(self.channels, 1)
            self.beta_data = mb.load(self.channels, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.shape[0] != self.channels:
            raise ShapeError(f"GroupNorm has {self.channels} channels, the input {x.shape} has "
                             f"{x.shape[0]} along its channel axis")
        return [norm.groupnorm(x, self.group, self.eps, self.gamma_data, self.beta_data)]

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
        if shape[0] != self.channels:
            raise ShapeError(f"GroupNorm has {self.channels} channels, the input {shape} has "
                             f"{shape[0]} along its channel axis")
        if (self.channels // self.group) % x.elempack:
            x = cmd.vkdev.convert_packing(x, 1, cmd, opt)  # a pack4 item would span two groups
        layout = rows.channel_groups_layout(x, self.group)
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_beta_gpu)]
