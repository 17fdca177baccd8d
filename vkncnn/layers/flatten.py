"""Flatten: the blob's values in row-major (c, d, h, w) order as one 1-D blob.

GPU: a view when the bytes already are in that order (elempack 1, or one position per
item), else a repacking copy (shaders/gather.comp).
"""

import numpy as np

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("Flatten")
class Flatten(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def forward_cpu(self, bottoms, opt):
        return [bottoms[0].reshape(-1)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        return [gather.reshape_to(x, (int(np.prod(x.numpy_shape())),), cmd, opt)]
