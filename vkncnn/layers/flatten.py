"""Flatten: the blob's values in row-major (c, d, h, w) order as one 1-D blob."""

from vkncnn.layer import Layer, register_layer


@register_layer("Flatten")
class Flatten(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def forward_cpu(self, bottoms, opt):
        return [bottoms[0].reshape(-1)]
