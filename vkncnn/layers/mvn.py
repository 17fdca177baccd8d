"""MVN: mean-variance normalisation (Caffe's), per channel or across channels.

Params: 0 normalize_variance 0, 1 across_channels 0, 2 eps 0.0001. y = x - mean, and
with normalize_variance y / (sqrt(mean(y^2)) + eps). ncnn outputs a 3-D blob for a 1-3-D
input: a 1-D (w) input becomes (1, 1, w), a 2-D (h, w) one (1, h, w). A 4-D (c, d, h, w)
input keeps its shape, each channel's statistics over its d*h*w values.
"""

import numpy as np

from vkncnn.cpu_fallback import statistics
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("MVN")
class MVN(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.normalize_variance = pd.get(0, 0)
        self.across_channels = pd.get(1, 0)
        self.eps = pd.get(2, 0.0001)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = np.asarray(bottoms[0], np.float32)
        if x.ndim > 4:
            raise ShapeError(f"MVN {self.name!r} takes 1-4-D blobs, got {x.ndim}-D {x.shape}")
        planes = x if x.ndim == 4 else x.reshape((1,) * (3 - x.ndim) + x.shape)
        c = planes.shape[0]
        out = statistics.mvn(planes.reshape(c, -1), bool(self.normalize_variance),
                             bool(self.across_channels), self.eps)
        return [out.reshape(planes.shape)]
