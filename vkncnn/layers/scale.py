"""Scale: y = x * scale[q] (+ bias[q]) per channel.

The channel axis is numpy axis 0 (w of 1-D, h of 2-D, c of 3-D/4-D). With
scale_data_size = -233 the scales come from a second input blob (a vector with one
value per channel) instead of the weights.
"""

import numpy as np

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer

SCALE_FROM_INPUT = -233


@register_layer("Scale")
class Scale(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

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

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        channels = x.shape[0]
        if self.scale_data_size == SCALE_FROM_INPUT:
            if len(bottoms) != 2:
                raise ShapeError(f"Scale with scale_data_size=-233 takes 2 inputs, got {len(bottoms)}")
            s = bottoms[1]
            # ncnn reads the scale blob as a flat array: only 1-D/2-D blobs are stored densely
            if s.ndim > 2 or s.size != channels:
                raise ShapeError(f"Scale's scale input must be a 1-D blob of {channels} values "
                                 f"(one per channel of {x.shape}), got shape {s.shape}")
            scale = np.asarray(s, np.float32).ravel()
        else:
            if channels > self.scale_data_size:
                raise ShapeError(f"Scale has {self.scale_data_size} scales but the input {x.shape} "
                                 f"has {channels} channels along its channel axis")
            scale = self.scale_data[:channels]
        bias = self.bias_data[:channels] if self.bias_data is not None else None
        return [norm.channel_affine(x, scale, bias)]
