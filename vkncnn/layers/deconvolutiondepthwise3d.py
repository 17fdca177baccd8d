"""DeconvolutionDepthWise3D: grouped Deconvolution3D.

`group` (7) splits input and output channels into independent transposed volumetric
convolutions; weights are `[group][num_output/group][num_input/group][kd][kh][kw]`,
run as one batched matrix product.
"""

from __future__ import annotations

from vkncnn.layer import register_layer

from .deconvolution3d import Deconvolution3D


@register_layer("DeconvolutionDepthWise3D")
class DeconvolutionDepthWise3D(Deconvolution3D):
    def _load_group(self, pd) -> int:
        return pd.get(7, 1)
