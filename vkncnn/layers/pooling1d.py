"""Pooling1D: max / average pooling along w of a (channels=h, w) blob, as pnnx writes for
nn.MaxPool1d / AvgPool1d / AdaptiveAvgPool1d. Same padding rules as Pooling, on one axis:
the 2-D kernels run with a 1-tall window.
"""

import numpy as np

from vkncnn.cpu_fallback import pooling
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer

from .pooling import check_adaptive_budget, check_window_budget


@register_layer("Pooling1D")
class Pooling1D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd) -> int:
        self.pooling_type = pd.get(0, 0)
        self.kernel_w = pd.get(1, 0)
        self.stride_w = pd.get(2, 1)
        self.pad_left = pd.get(3, 0)
        self.pad_right = pd.get(14, self.pad_left)
        self.global_pooling = pd.get(4, 0)
        self.pad_mode = pd.get(5, 0)
        self.avgpool_count_include_pad = pd.get(6, 0)
        self.adaptive_pooling = pd.get(7, 0)
        self.out_w = pd.get(8, 0)
        if self.pooling_type not in (pooling.POOL_MAX, pooling.POOL_AVG):
            raise ParamError(f"Pooling1D: pooling_type {self.pooling_type} is not 0 (max) or 1 (avg)")
        if self.pad_mode not in (0, 1, 2, 3):
            raise ParamError(f"Pooling1D: pad_mode {self.pad_mode} is not 0-3")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 1:
            x = x[None]
        if x.ndim != 2:
            raise ShapeError(f"Pooling1D takes a 2-D (channels, w) blob, got shape {bottoms[0].shape}")
        if x.size == 0:
            raise ShapeError(f"Pooling1D: input {bottoms[0].shape} is empty, there is nothing to pool")
        planes = x[:, None, :]  # (channels, 1, w): each channel one row
        if self.global_pooling:
            return [pooling.global_pool(planes, self.pooling_type).reshape(-1)]
        if self.adaptive_pooling:
            if self.out_w <= 0:
                raise ParamError(f"Pooling1D: adaptive out_w {self.out_w} must be positive")
            check_adaptive_budget(opt, planes.shape, 1, self.out_w)
            return [pooling.adaptive_pool(planes, self.pooling_type, 1, self.out_w)[:, 0]]
        if self.kernel_w <= 0 or self.stride_w <= 0:
            raise ParamError(f"Pooling1D: kernel {self.kernel_w} and stride {self.stride_w} must be positive")
        check_window_budget(opt, planes.shape, (1, self.kernel_w), (1, self.stride_w),
                            (0, 0, self.pad_left, self.pad_right), self.pad_mode)
        try:
            y = pooling.window_pool(planes, self.pooling_type, (1, self.kernel_w), (1, self.stride_w),
                                    (0, 0, self.pad_left, self.pad_right), self.pad_mode,
                                    bool(self.avgpool_count_include_pad))
        except ValueError as e:
            raise ShapeError(f"Pooling1D on input {bottoms[0].shape}: {e}") from None
        return [y[:, 0].astype(np.float32, copy=False)]
