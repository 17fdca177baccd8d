"""StatisticsPooling (x-vector speaker models): per-channel mean, and optionally stddev.

Param 0 include_stddev 0. Input (c, h, w) or (c, d, h, w), or a 1-D/2-D blob as one
channel; output 1-D: c means, then c population standard deviations if asked.
"""

import numpy as np

from vkncnn.cpu_fallback import statistics
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("StatisticsPooling")
class StatisticsPooling(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.include_stddev = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = np.asarray(bottoms[0], np.float32)
        if x.size == 0:
            raise ShapeError(f"StatisticsPooling: input {x.shape} is empty, there is nothing to pool")
        channels = x.shape[0] if x.ndim >= 3 else 1
        return [statistics.statistics_pool(x.reshape(channels, -1), bool(self.include_stddev))]
