"""Dropout at inference: y = x * scale (identity when scale is 1, the default)."""

import numpy as np

from vkncnn.layer import Layer, register_layer


@register_layer("Dropout")
class Dropout(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.scale = pd.get(0, 1.0)
        return 0

    def forward_cpu(self, bottoms, opt):
        if self.scale == 1.0:
            return [bottoms[0]]
        return [bottoms[0] * np.float32(self.scale)]
