"""Split: hand one blob to several consumers. No copy: blobs are never modified in place."""

from vkncnn.layer import Layer, register_layer


@register_layer("Split")
class Split(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def forward_cpu(self, bottoms, opt):
        return [bottoms[0]] * len(self.tops)
