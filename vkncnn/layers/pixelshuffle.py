"""PixelShuffle: depth to space, (c, h, w) -> (c/r^2, h*r, w*r).

mode 0 is PyTorch's nn.PixelShuffle (input channel = out_c * r^2 + sub_y * r + sub_x);
mode 1 reads the sub-pixel index first (input channel = (sub_y * r + sub_x) * out_c + c),
as TensorFlow's depth_to_space in DCR order. Like ncnn, a 4-D input is read as its
first depth slice.
"""

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("PixelShuffle")
class PixelShuffle(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.upscale_factor = pd.get(0, 1)
        self.mode = pd.get(1, 0)
        if self.upscale_factor <= 0:
            raise ParamError(f"PixelShuffle: upscale_factor {self.upscale_factor} must be positive")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        r = self.upscale_factor
        if x.ndim == 4:
            x = x[:, 0]  # ncnn reads each channel as one h x w image: the first depth slice
        if x.ndim != 3:
            raise ShapeError(f"PixelShuffle takes a 3-D blob, got shape {x.shape}")
        if x.shape[0] % (r * r) != 0:
            raise ShapeError(f"PixelShuffle: {x.shape[0]} channels are not a multiple of {r}^2")
        return [shape.pixel_shuffle(x, r, self.mode)]
