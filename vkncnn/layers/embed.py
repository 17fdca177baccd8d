"""Embed: a lookup table. Each word index of a 1-D input picks one row of
weight [input_dim][num_output] (+ bias), giving (words, num_output).

Params: 0 num_output, 1 input_dim, 2 bias_term, 3 weight_data_size, 18 int8_scale_term
(int8 table with one scale, loaded after the bias; rows are dequantized at load).
Indices outside [0, input_dim) are clamped, as ncnn does.

Word indices are the blob's values: vkncnn's Mat turns an int array into those values
(ncnn's Mat keeps the int bits and its Embed reads them), so `Mat(np.int32 ids)` means
the same words in both. ncnn embeds only the first row of a 2-D input; here any input
with more than one row is refused rather than cut short.
"""

import numpy as np

from vkncnn.cpu_fallback.conv import quantize
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("Embed")
class Embed(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        self.input_dim = pd.get(1, 0)
        self.bias_term = pd.get(2, 0)
        self.weight_data_size = pd.get(3, 0)
        self.int8_scale_term = pd.get(18, 0)
        if self.num_output <= 0 or self.input_dim <= 0:
            raise ParamError(f"Embed num_output (0) and input_dim (1) must be positive, got "
                             f"{self.num_output} and {self.input_dim}")
        if self.weight_data_size != self.num_output * self.input_dim:
            raise ParamError(f"Embed weight_data_size (3) {self.weight_data_size} != input_dim*num_output = "
                             f"{self.input_dim * self.num_output}")
        return 0

    def load_model(self, mb) -> int:
        weight = mb.load(self.weight_data_size, 0).reshape(self.input_dim, self.num_output)
        self.bias_data = np.asarray(mb.load(self.num_output, 1), np.float32) if self.bias_term else None
        if self.int8_scale_term:
            scale = np.float32(mb.load(1, 1)[0])
            q = weight if weight.dtype == np.int8 else quantize(weight, scale)
            descale = np.float32(0) if scale == 0 else np.float32(1) / scale
            weight = q.astype(np.float32) * descale
        elif weight.dtype == np.int8:
            raise WeightError("Embed has int8 weights but int8_scale_term (18) is 0: no scale to dequantize them")
        table = np.asarray(weight, np.float32)
        # the bias is the same for every word: fold it into the table once
        self.table = table + self.bias_data if self.bias_data is not None else table
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim > 1 and any(e != 1 for e in x.shape[:-1]):
            raise ShapeError(f"Embed {self.name!r} takes a 1-D sequence of word indices, got {x.shape} "
                             "(ncnn would embed only its first row)")
        check_alloc(opt, (x.size, self.num_output), 4, "the embedded rows")  # num_output rows per word
        words = np.nan_to_num(x.reshape(-1).astype(np.float64), nan=0.0)
        index = np.clip(words, 0, self.input_dim - 1).astype(np.int64)  # truncates, as a C cast
        return [self.table[index]]
