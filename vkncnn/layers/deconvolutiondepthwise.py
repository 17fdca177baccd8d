"""DeconvolutionDepthWise: grouped transposed convolution.

As Deconvolution, with `group` (7) splitting input and output channels into
independent transposed convolutions. Weights are
`[group][num_output/group][num_input/group][kernel_h][kernel_w]`; group == channels
== num_output (the usual 2x "learned upsampling") scatters one scaled copy of the
input per kernel tap, other groups run as one batched matrix product.
"""

from __future__ import annotations

from vkncnn.layer import register_layer

from .deconvolution import Deconvolution


@register_layer("DeconvolutionDepthWise")
class DeconvolutionDepthWise(Deconvolution):
    def _load_group(self, pd) -> int:
        return pd.get(7, 1)
