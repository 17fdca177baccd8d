"""Bias: adds bias[q] to every element of channel q of a 3-D/4-D blob.

A 1-D or 2-D blob is a single ncnn channel, so it gets bias[0] everywhere.
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.affine import AffineLayer


@register_layer("Bias")
class Bias(AffineLayer):
    def load_param(self, pd) -> int:
        self.bias_data_size = pd.get(0, 0)
        self.support_vulkan = self.bias_data_size > 0  # no values: the numpy path reports it
        return 0

    def load_model(self, mb) -> int:
        self.bias_data = mb.load(self.bias_data_size, 1)
        return 0

    def check_input(self, shape: tuple) -> None:
        channels = shape[0] if len(shape) >= 3 else 1
        if channels > self.bias_data.size:
            raise ShapeError(f"Bias has {self.bias_data.size} values but the input {shape} "
                             f"has {channels} channels")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        self.check_input(x.shape)
        if x.ndim < 3:
            return [(x + self.bias_data[0]).astype(np.float32, copy=False)]
        return [norm.channel_affine(x, None, self.bias_data[: x.shape[0]])]

    # -- GPU: affine.comp, y = x + bias[c] (bias[0] everywhere for a 1-D/2-D blob) --
    def affine_gpu(self, opt):
        return elementwise.AffineGpu(self.vkdev, opt, elementwise.AFFINE, bias=self.bias_data)

    def per_channel(self, x) -> bool:
        return x.dims >= 3
