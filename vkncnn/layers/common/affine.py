"""AffineLayer: the shape shared by per-channel one-input layers (BatchNorm, Bias, PReLU).

On the GPU each is shaders/affine.comp with its per-channel parameters uploaded once as
fp32. A subclass implements `check_input(shape)` (the same check on both paths),
`affine_gpu(opt)` (the AffineGpu holding its parameters) and, when a blob may get one
shared value instead of one per channel, `per_channel(x)`.
"""

from __future__ import annotations

from ...errors import LayerError
from ...layer import Layer


class AffineLayer(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.gpu_op = None

    def affine_gpu(self, opt):  # pragma: no cover - every subclass defines it
        raise LayerError(f"{type(self).__name__} does not say which AffineGpu it records")

    def check_input(self, shape: tuple) -> None:
        pass

    def per_channel(self, x) -> bool:
        return True

    def create_pipeline(self, opt) -> int:
        self.gpu_op = self.affine_gpu(opt) if self.vkdev is not None and self.support_vulkan else None
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gpu_op.upload(cmd, opt)
        return 0

    def destroy_pipeline(self, opt) -> int:
        if self.gpu_op is not None:
            self.gpu_op.release()
            self.gpu_op = None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        self.check_input(x.numpy_shape())
        return [self.gpu_op.forward(x, cmd, opt, per_channel=self.per_channel(x))]
