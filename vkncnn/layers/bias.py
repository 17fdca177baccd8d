"""Bias: adds bias[q] to every element of channel q of a 3-D/4-D blob.

A 1-D or 2-D blob is a single ncnn channel, so it gets bias[0] everywhere.
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Bias")
class Bias(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.bias_data_size = pd.get(0, 0)
        return 0

    def load_model(self, mb) -> int:
        self.bias_data = mb.load(self.bias_data_size, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        channels = x.shape[0] if x.ndim >= 3 else 1
        if channels > self.bias_data.size:
            raise ShapeError(f"Bias has {self.bias_data.size} values but the input {x.shape} "
                             f"has {channels} channels")
        if x.ndim < 3:
            return [(x + self.bias_data[0]).astype(np.float32, copy=False)]
        return [norm.channel_affine(x, None, self.bias_data[:channels])]
