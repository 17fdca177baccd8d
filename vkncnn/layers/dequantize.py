"""Dequantize: int32 accumulator -> float, y = x * scale + bias.

Params: 0 scale_data_size 1, 1 bias_data_size 0. Weights: scale_data [scale_data_size],
then bias_data [bias_data_size] if any (both raw fp32). Each table is one value, or
one per row (2-D) / channel (3-D, 4-D). ncnn reads its input as int32; here blobs are
float32 holding the integers (a Mat made from an int32 array keeps their values).
"""

from vkncnn.cpu_fallback import quantize as kernel
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.quantization import check_size, check_table


@register_layer("Dequantize")
class Dequantize(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.scale_data_size = check_size(self, 0, "scale_data_size", pd.get(0, 1))
        self.bias_data_size = check_size(self, 1, "bias_data_size", pd.get(1, 0), allow_zero=True)
        return 0

    def load_model(self, mb) -> int:
        self.scale_data = mb.load(self.scale_data_size, 1)
        self.bias_data = mb.load(self.bias_data_size, 1) if self.bias_data_size else None
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        check_table(self, "scale_data", self.scale_data, x)
        if self.bias_data is not None:
            check_table(self, "bias_data", self.bias_data, x)
        return [kernel.dequantize(x, self.scale_data, self.bias_data)]
