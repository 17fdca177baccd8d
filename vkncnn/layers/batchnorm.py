"""BatchNorm: y = (x - mean) / sqrt(var + eps) * slope + bias per channel,
folded at load into y = b * x + a.

The channel axis is ncnn's packing axis: w of a 1-D blob, h of 2-D, c of 3-D/4-D
(numpy axis 0 in every case).
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.affine import AffineLayer


@register_layer("BatchNorm")
class BatchNorm(AffineLayer):
    def load_param(self, pd) -> int:
        self.channels = pd.get(0, 0)
        self.eps = pd.get(1, 0.0)
        return 0

    def load_model(self, mb) -> int:
        slope = mb.load(self.channels, 1)
        mean = mb.load(self.channels, 1)
        var = mb.load(self.channels, 1)
        bias = mb.load(self.channels, 1)
        self.b_data, self.a_data = norm.fold_batchnorm(slope, mean, var, bias, self.eps)
        return 0

    def check_input(self, shape: tuple) -> None:
        if shape[0] != self.channels:
            raise ShapeError(f"BatchNorm has {self.channels} channels but the input {shape} "
                             f"has {shape[0]} along its channel axis")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        self.check_input(x.shape)
        return [norm.channel_affine(x, self.b_data, self.a_data)]

    # -- GPU: affine.comp, y = b[c] * x + a[c] with the folded fp32 parameters --
    def affine_gpu(self, opt):
        return elementwise.AffineGpu(self.vkdev, opt, elementwise.AFFINE, self.b_data, self.a_data)
