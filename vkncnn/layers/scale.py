"""Scale: y = x * scale[q] (+ bias[q]) per channel.

The channel axis is numpy axis 0 (w of 1-D, h of 2-D, c of 3-D/4-D). With
scale_data_size = -233 the scales come from a second input blob (a vector with one
value per channel) instead of the weights.
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import Layer, register_layer

SCALE_FROM_INPUT = -233


@register_layer("Scale")
class Scale(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.scale_data_size = pd.get(0, 0)
        self.bias_term = pd.get(1, 0)
        if self.scale_data_size == SCALE_FROM_INPUT:
            self.one_blob_only = False
            if self.bias_term:
                # ncnn would try to load a bias of size -233 (and crash)
                raise ParamError("Scale with scale_data_size=-233 (scale from input) cannot have bias_term")
        elif self.scale_data_size < 0:
            raise ParamError(f"Scale scale_data_size must be >= 0 or -233, got {self.scale_data_size}")
        return 0

    def load_model(self, mb) -> int:
        self.scale_data = None
        self.bias_data = None
        if self.scale_data_size != SCALE_FROM_INPUT:
            self.scale_data = mb.load(self.scale_data_size, 1)
        if self.bias_term:
            self.bias_data = mb.load(self.scale_data_size, 1)
        return 0

    def check_inputs(self, shapes: list) -> None:
        """The numpy and GPU paths accept the same inputs (numpy shapes)."""
        shape = shapes[0]
        channels = shape[0]
        if self.scale_data_size == SCALE_FROM_INPUT:
            if len(shapes) != 2:
                raise ShapeError(f"Scale with scale_data_size=-233 takes 2 inputs, got {len(shapes)}")
            s = shapes[1]
            # ncnn reads the scale blob as a flat array: only 1-D/2-D blobs are stored densely
            if len(s) > 2 or int(np.prod(s)) != channels:
                raise ShapeError(f"Scale's scale input must be a 1-D blob of {channels} values "
                                 f"(one per channel of {shape}), got shape {s}")
        elif channels > self.scale_data_size:
            raise ShapeError(f"Scale has {self.scale_data_size} scales but the input {shape} "
                             f"has {channels} channels along its channel axis")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        channels = x.shape[0]
        self.check_inputs([b.shape for b in bottoms])
        if self.scale_data_size == SCALE_FROM_INPUT:
            scale = np.asarray(bottoms[1], np.float32).ravel()
        else:
            scale = self.scale_data[:channels]
        bias = self.bias_data[:channels] if self.bias_data is not None else None
        return [norm.channel_affine(x, scale, bias)]

    # -- GPU: affine.comp, y = x * scale[c] (+ bias[c]); the scales from weights or a blob --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = None
        if self.vkdev is not None:
            from_blob = self.scale_data_size == SCALE_FROM_INPUT
            self.gpu_op = elementwise.AffineGpu(self.vkdev, opt, elementwise.AFFINE, self.scale_data,
                                                self.bias_data, scale_from_blob=from_blob)
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
        self.check_inputs([b.numpy_shape() for b in bottoms])
        scale_blob = bottoms[1] if self.scale_data_size == SCALE_FROM_INPUT else None
        return [self.gpu_op.forward(bottoms[0], cmd, opt, scale_blob)]
