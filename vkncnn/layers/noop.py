"""Noop: passes its inputs through unchanged; top i is bottom i (extra bottoms are dropped).

ncnn runs Noop in place over all bottoms and then hands out the first `top_count`
of them, so `Noop output 2 1 a b output` makes `output` = `a`.
"""

from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Noop")
class Noop(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.support_inplace = True

    def forward_cpu(self, bottoms, opt):
        if len(self.tops) > len(bottoms):
            raise ShapeError(f"Noop has {len(bottoms)} inputs but {len(self.tops)} outputs")
        return list(bottoms[:len(self.tops)])
