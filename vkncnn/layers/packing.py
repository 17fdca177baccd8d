"""Packing: convert a blob's element packing (ncnn's internal SIMD layout).

Params: 0 out_elempack 1, 1 use_padding 0, 2 cast_type_from 0, 3 cast_type_to 0,
4 storage_type_from 0, 5 storage_type_to 0 (the casts and storage types are used by
ncnn's Vulkan Packing only). vkncnn blobs are always unpacked (elempack 1) and what a
user extracts from ncnn is unpacked again, so the values pass through unchanged.
With use_padding, ncnn pads the packed axis up to a multiple of out_elempack with
uninitialised lanes; that padding has no defined value, so such a blob is refused.
"""

import numpy as np

from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Packing")
class Packing(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.out_elempack = pd.get(0, 1)
        self.use_padding = pd.get(1, 0)
        self.cast_type_from = pd.get(2, 0)
        self.cast_type_to = pd.get(3, 0)
        self.storage_type_from = pd.get(4, 0)
        self.storage_type_to = pd.get(5, 0)
        if self.out_elempack not in (1, 4, 8, 16):
            raise ParamError(f"Packing {self.name!r}: out_elempack (param 0) must be 1, 4, 8 or 16, "
                             f"got {self.out_elempack}")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        # the packed axis is numpy's first one at every rank: w (1-D), h (2-D), c (3-D, 4-D)
        if self.use_padding and x.shape[0] % self.out_elempack:
            raise ShapeError(f"Packing {self.name!r}: use_padding would pad axis 0 of {x.shape} to a multiple "
                             f"of {self.out_elempack} with undefined values")
        return [np.array(x, copy=True)]
