"""Quantize: float -> int8, y = clamp(round(x * scale), -127, 127) (halves away from zero).

Param 0 scale_data_size 1; weights: scale_data [scale_data_size] (raw fp32). The scale
is one value, or one per row (2-D) / channel (3-D, 4-D). The output is an int8 blob,
as in ncnn (extract gives its values as float32).
"""

from vkncnn.cpu_fallback import quantize as kernel
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.quantization import check_size, check_table


@register_layer("Quantize")
class Quantize(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_int8_storage = True

    def load_param(self, pd) -> int:
        self.scale_data_size = check_size(self, 0, "scale_data_size", pd.get(0, 1))
        return 0

    def load_model(self, mb) -> int:
        self.scale_data = mb.load(self.scale_data_size, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        check_table(self, "scale_data", self.scale_data, x)
        return [kernel.quantize(x, self.scale_data)]
