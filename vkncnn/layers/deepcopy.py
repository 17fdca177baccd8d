"""DeepCopy: the output is a fresh copy of the input (never shares its memory)."""

import numpy as np

from vkncnn.layer import Layer, register_layer


@register_layer("DeepCopy")
class DeepCopy(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def forward_cpu(self, bottoms, opt):
        return [np.array(bottoms[0], copy=True)]
