"""LRN (local response normalisation): x * (bias + alpha / n * sum of x^2 in a window)^-beta.

region_type 0 (across channels): the window is local_size channels starting
local_size/2 before q, at the same position, n = local_size. region_type 1 (within
channel): a local_size x local_size square in the (h, w) plane, n = local_size^2.
Windows are zero padded. 1-D and 2-D blobs are a single channel.

GPU: shaders/lrn.comp, one invocation per element summing its window directly (pack1 or
pack4; windows are small).
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan.pipeline import shader_pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("LRN")
class LRN(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.region_type = pd.get(0, 0)
        self.local_size = pd.get(1, 5)
        self.alpha = pd.get(2, 1.0)
        self.beta = pd.get(3, 0.75)
        self.bias = pd.get(4, 1.0)
        if self.region_type not in (norm.LRN_ACROSS_CHANNELS, norm.LRN_WITHIN_CHANNEL):
            raise ParamError(f"LRN region_type {self.region_type} is not 0 (across) or 1 (within)")
        if self.local_size < 1:
            raise ParamError(f"LRN local_size must be >= 1, got {self.local_size}")
        return 0

    def forward_cpu(self, bottoms, opt):
        if bottoms[0].ndim > 3:
            # ncnn's LRN is written for (c, h, w): on a 4-D blob it only touches the
            # first depth slice of each channel, which no caller can want
            raise ShapeError(f"LRN takes 1-D to 3-D blobs, got shape {bottoms[0].shape}")
        self._check_budget(opt, bottoms[0].shape)
        return [norm.lrn(bottoms[0], self.region_type, self.local_size, self.alpha, self.beta, self.bias)]

    def _check_budget(self, opt, shape: tuple) -> None:
        """A window of more than 16 is summed through a float64 running sum, its axis
        lengthened by local_size, a param (norm._window_sum)."""
        if self.local_size <= 16:
            return
        c, h, w = (1,) * (3 - len(shape)) + tuple(shape)
        k = self.local_size
        sums = [(c + k, h, w)] if self.region_type == 0 else [(c, h + k, w), (c, h, w + k)]
        for summed in sums:
            check_alloc(opt, summed, 8, "the running window sum")

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0

        self.pipeline = shader_pipeline(self.vkdev, "lrn", use_fp16_storage(opt, self.vkdev), [self.region_type],
                                        (rows.FLAT_LOCAL, 1, 1))
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        if x.dims > 3:
            raise ShapeError(f"LRN takes 1-D to 3-D blobs, got shape {x.numpy_shape()}")
        n = self.local_size if self.region_type == norm.LRN_ACROSS_CHANNELS else self.local_size ** 2
        top = VkMat.create_like(x, cmd.blob_allocator(opt))
        total = top.total() * top.elempack
        a = rows.padded_shape(x)
        cmd.record_pipeline(self.pipeline, [x, top],
                            [total, a[0], a[1], a[2], x.dims, x.elempack, self.local_size,
                             float(np.float32(self.alpha / n)), float(self.beta), float(self.bias)],
                            rows.flat_dispatch(total))
        return [top]
