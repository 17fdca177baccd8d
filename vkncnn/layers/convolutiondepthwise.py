"""ConvolutionDepthWise: grouped convolution, y = activation(conv2d_groups(pad(x), weight) + bias).

`group` (7) splits input and output channels into independent convolutions; weights
are `[group][num_output/group][num_input/group][kernel_h][kernel_w]`. group ==
channels == num_output is the depthwise case (one multiply-add per kernel tap over
the whole tensor); other groups run as one batched matrix product.

int8: term 1/101 stores one weight scale per group, 2/102 one for all groups; the
bottom scale is shared; > 100 adds the top scale (int8 output).
"""

from __future__ import annotations

import numpy as np

from vkncnn.errors import ParamError
from vkncnn.layer import register_layer

from .convolution import Convolution


@register_layer("ConvolutionDepthWise")
class ConvolutionDepthWise(Convolution):
    flat_input_path = False

    def _load_group(self, pd) -> int:
        return pd.get(7, 1)

    def _load_int8_scales(self, mb) -> None:
        term = self.int8_scale_term
        if term in (1, 101):
            self.weight_int8_scales = mb.load(self.group, 1)
        elif term in (2, 102):
            self.weight_int8_scales = np.repeat(mb.load(1, 1), self.group)
        else:
            raise ParamError(f"int8_scale_term (8) must be 0, 1, 2, 101 or 102, got {term}")
        self.bottom_int8_scale = float(mb.load(1, 1)[0])
        self.top_int8_scale = float(mb.load(1, 1)[0]) if term > 100 else None

    def _per_output_weight_scales(self) -> np.ndarray:
        # one scale per group, shared by that group's output channels
        return np.repeat(np.asarray(self.weight_int8_scales, np.float32), self.num_output // self.group)
