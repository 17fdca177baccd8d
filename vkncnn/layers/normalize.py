"""Normalize (SSD's L2 normalisation): x / ||x|| * scale.

The norm runs across channels at each position (across_channel), across each
channel's spatial extent (across_spatial), or both. eps_mode places eps as
0 caffe: 1/sqrt(sum + eps), 1 pytorch: 1/max(sqrt(sum), eps), 2 tensorflow:
1/sqrt(max(sum, eps)). scale is one value (channel_shared) or one per channel.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Normalize")
class Normalize(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.across_spatial = pd.get(0, 0)
        self.across_channel = pd.get(4, 1)
        self.channel_shared = pd.get(1, 0)
        self.eps = pd.get(2, 0.0001)
        self.eps_mode = pd.get(9, 0)
        self.scale_data_size = pd.get(3, 0)
        return 0

    def load_model(self, mb) -> int:
        self.scale_data = mb.load(self.scale_data_size, 1)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        channels = x.shape[0] if x.ndim >= 3 else 1
        need = 1 if self.channel_shared else channels
        if self.scale_data.size < need:
            raise ShapeError(f"Normalize has {self.scale_data.size} scales but needs {need} "
                             f"for input {x.shape}")
        return [norm.normalize(x, bool(self.across_spatial), bool(self.across_channel),
                               bool(self.channel_shared), self.eps, self.eps_mode, self.scale_data)]
