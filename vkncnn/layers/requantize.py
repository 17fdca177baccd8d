"""Requantize: int32 accumulator -> int8 for the next int8 layer.

y = clamp(round(activation(x * scale_in + bias) * scale_out), -127, 127).
Params: 0 scale_in_data_size 1, 1 scale_out_data_size 1, 2 bias_data_size 0,
3 activation_type 0 (as Convolution's: 1 ReLU, 2 LeakyReLU, 3 Clip, 4 Sigmoid, 5 Mish,
6 HardSwish), 4 activation_params []. Weights (raw fp32): scale_in [size], scale_out
[size], bias [size] if any; each one value or one per row (2-D) / channel (3-D, 4-D).
"""

import numpy as np

from vkncnn.cpu_fallback import quantize as kernel
from vkncnn.errors import ParamError
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.quantization import check_size, check_table


@register_layer("Requantize")
class Requantize(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_int8_storage = True

    def load_param(self, pd) -> int:
        self.scale_in_data_size = check_size(self, 0, "scale_in_data_size", pd.get(0, 1))
        self.scale_out_data_size = check_size(self, 1, "scale_out_data_size", pd.get(1, 1))
        self.bias_data_size = check_size(self, 2, "bias_data_size", pd.get(2, 0), allow_zero=True)
        self.activation_type = pd.get(3, 0)
        self.activation_params = pd.get(4, np.zeros(0, np.float32))
        if not 0 <= self.activation_type <= 6:
            raise ParamError(f"Requantize {self.name!r}: activation_type (param 3) must be 0-6, "
                             f"got {self.activation_type}")
        return 0

    def load_model(self, mb) -> int:
        self.scale_in_data = mb.load(self.scale_in_data_size, 1)
        self.scale_out_data = mb.load(self.scale_out_data_size, 1)
        self.bias_data = mb.load(self.bias_data_size, 1) if self.bias_data_size else None
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        for name in ("scale_in_data", "scale_out_data", "bias_data"):
            if getattr(self, name) is not None:
                check_table(self, name, getattr(self, name), x)
        return [kernel.requantize(x, self.scale_in_data, self.scale_out_data, self.bias_data,
                                  self.activation_type, self.activation_params)]
