"""PReLU: y = x for x >= 0, x * slope for x < 0.

num_slope = 1 shares one slope; otherwise there is one slope per channel along
ncnn's channel axis (numpy axis 0): w of a 1-D blob, h of 2-D, c of 3-D/4-D.
"""

from vkncnn.cpu_fallback import activation
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.affine import AffineLayer


@register_layer("PReLU")
class PReLU(AffineLayer):
    def load_param(self, pd) -> int:
        self.num_slope = pd.get(0, 0)
        if self.num_slope < 1:
            raise ParamError(f"PReLU num_slope must be >= 1, got {self.num_slope}")
        return 0

    def load_model(self, mb) -> int:
        self.slope_data = mb.load(self.num_slope, 1)
        return 0

    def check_input(self, shape: tuple) -> None:
        if self.num_slope > 1 and shape[0] > self.num_slope:
            raise ShapeError(f"PReLU has {self.num_slope} slopes but the input {shape} has "
                             f"{shape[0]} channels along its channel axis")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if self.num_slope == 1:
            return [activation.prelu(x, self.slope_data)]
        self.check_input(x.shape)
        # ncnn reads slope[q] for each channel q: extra slopes are simply unused
        return [activation.prelu(x, self.slope_data[: x.shape[0]])]

    # -- GPU: affine.comp in PReLU mode, the slopes as fp32 parameters --
    def affine_gpu(self, opt):
        return elementwise.AffineGpu(self.vkdev, opt, elementwise.PRELU, self.slope_data)

    def per_channel(self, x) -> bool:
        return self.num_slope > 1
