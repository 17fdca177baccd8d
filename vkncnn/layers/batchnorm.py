"""BatchNorm: y = (x - mean) / sqrt(var + eps) * slope + bias per channel,
folded at load into y = b * x + a.

The channel axis is ncnn's packing axis: w of a 1-D blob, h of 2-D, c of 3-D/4-D
(numpy axis 0 in every case).
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ShapeError
from vkncnn.gpu import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("BatchNorm")
class BatchNorm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

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
    def create_pipeline(self, opt) -> int:
        self.gpu_op = None
        if self.vkdev is not None:
            self.gpu_op = elementwise.AffineGpu(self.vkdev, opt, elementwise.AFFINE, self.b_data, self.a_data)
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gpu_op.upload(cmd, opt)
        return 0

    def destroy_pipeline(self, opt) -> int:
        if getattr(self, "gpu_op", None) is not None:
            self.gpu_op.release()
            self.gpu_op = None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        self.check_input(x.numpy_shape())
        return [self.gpu_op.forward(x, cmd, opt)]
