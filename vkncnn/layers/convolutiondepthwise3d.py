"""ConvolutionDepthWise3D: grouped Convolution3D.

`group` (7) splits input and output channels into independent volumetric convolutions;
weights are `[group][num_output/group][num_input/group][kd][kh][kw]`. All groups run
as one batched matrix product over the im2col matrix (group == channels included:
there each product has an inner dimension of kd*kh*kw).
"""

from __future__ import annotations

from vkncnn.layer import register_layer

from .convolution3d import Convolution3D


@register_layer("ConvolutionDepthWise3D")
class ConvolutionDepthWise3D(Convolution3D):
    def _load_group(self, pd) -> int:
        return pd.get(7, 1)
