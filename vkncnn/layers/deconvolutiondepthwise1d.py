"""DeconvolutionDepthWise1D: grouped Deconvolution1D (ConvTranspose1d with groups).

`group` (7) splits input and output channels into independent transposed 1-D
convolutions; weights are `[group][num_output/group][num_input/group][kernel_w]`.
On the GPU the group sizes pick the shader as for DeconvolutionDepthWise (depthwise,
small groups, one matrix product per group).
"""

from __future__ import annotations

from vkncnn.layer import register_layer

from .deconvolution1d import Deconvolution1D


@register_layer("DeconvolutionDepthWise1D")
class DeconvolutionDepthWise1D(Deconvolution1D):
    group_param = 7
