"""Dropout at inference: y = x * scale (identity when scale is 1, the default).

GPU: a view of the input when scale is 1 (no copy), else shaders/dropout.comp, which
scales the buffer scalar by scalar whatever its elempack.
"""

import numpy as np

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Dropout")
class Dropout(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True

    def load_param(self, pd) -> int:
        self.scale = pd.get(0, 1.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        if self.scale == 1.0:
            return [bottoms[0]]
        return [bottoms[0] * np.float32(self.scale)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        if self.scale == 1.0:
            return [gather.view(x, x.numpy_shape())]
        top = gather.new_like_shape(x.numpy_shape(), x.elempack, x.scalar_size(), cmd, opt)
        n = x.total() * x.elempack
        pipeline = gather.shader_pipeline(cmd.vkdev, "dropout", gather.storage_is_fp16(x), [float(self.scale)])
        cmd.record_pipeline(pipeline, [x, top], [n], gather.flat_grid(n))
        return [top]
