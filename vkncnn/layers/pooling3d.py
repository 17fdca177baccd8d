"""Pooling3D: max / average pooling over (c, d, h, w) volumes, as pnnx writes for
nn.MaxPool3d / AvgPool3d / AdaptiveAvg/MaxPool3d.

Params as Pooling with a depth axis: 0 pooling_type (0 max, 1 avg); kernel 1/11/21,
stride 2/12/22 and pads 3 left, 14 right, 13 top, 15 bottom, 23 front, 16 behind
(w, h, d; an absent h/d value repeats the w one); 4 global_pooling; 5 pad_mode
(0 full, 1 valid, 2 SAME_UPPER, 3 SAME_LOWER); 6 avgpool_count_include_pad;
7 adaptive_pooling with out_w/out_h/out_d 8/18/28. A 3-D blob is one slice deep.
Runs on numpy in GPU nets too (no shader).
"""

import numpy as np

from vkncnn.cpu_fallback import pooling, pooling3d
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_elements, check_window, out_extent
from .common.window3d import as_volume


@register_layer("Pooling3D")
class Pooling3D(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True

    def load_param(self, pd) -> int:
        self.pooling_type = pd.get(0, 0)
        self.kernel_w = pd.get(1, 0)
        self.kernel_h = pd.get(11, self.kernel_w)
        self.kernel_d = pd.get(21, self.kernel_w)
        self.stride_w = pd.get(2, 1)
        self.stride_h = pd.get(12, self.stride_w)
        self.stride_d = pd.get(22, self.stride_w)
        self.pad_left = pd.get(3, 0)
        self.pad_right = pd.get(14, self.pad_left)
        self.pad_top = pd.get(13, self.pad_left)
        self.pad_bottom = pd.get(15, self.pad_top)
        self.pad_front = pd.get(23, self.pad_top)
        self.pad_behind = pd.get(16, self.pad_front)
        self.global_pooling = pd.get(4, 0)
        self.pad_mode = pd.get(5, 0)
        self.avgpool_count_include_pad = pd.get(6, 0)
        self.adaptive_pooling = pd.get(7, 0)
        self.out_w = pd.get(8, 0)
        self.out_h = pd.get(18, self.out_w)
        self.out_d = pd.get(28, self.out_w)
        if self.pooling_type not in (pooling.POOL_MAX, pooling.POOL_AVG):
            raise ParamError(f"pooling_type (0) {self.pooling_type} is not 0 (max) or 1 (avg)")
        if self.pad_mode not in (0, 1, 2, 3):
            raise ParamError(f"pad_mode (5) {self.pad_mode} is not 0-3")
        if self.global_pooling:
            return 0
        if self.adaptive_pooling:
            if min(self.out_w, self.out_h, self.out_d) <= 0:
                raise ParamError(f"adaptive out_w/h/d (8/18/28) must be positive, got "
                                 f"{self.out_w}/{self.out_h}/{self.out_d}")
            return 0
        if min(self.kernel_w, self.kernel_h, self.kernel_d, self.stride_w, self.stride_h, self.stride_d) <= 0:
            raise ParamError(f"kernel {self._kernel} and stride {self._stride} (d, h, w) must be positive")
        if min(self.pad_left, self.pad_right, self.pad_top, self.pad_bottom, self.pad_front, self.pad_behind) < 0:
            raise ParamError("pads (3/14/13/15/23/16) must not be negative")
        return 0

    @property
    def _kernel(self):
        return self.kernel_d, self.kernel_h, self.kernel_w

    @property
    def _stride(self):
        return self.stride_d, self.stride_h, self.stride_w

    def forward_cpu(self, bottoms, opt):
        x = as_volume(bottoms[0], self.type).astype(np.float32, copy=False)
        if x.size == 0:
            raise ShapeError(f"Pooling3D: input {bottoms[0].shape} is empty, there is nothing to pool")
        if self.global_pooling:
            return [pooling3d.global_pool3d(x, self.pooling_type)]
        if self.adaptive_pooling:
            # one axis at a time: (c, od, h, w), then (c, od, oh, w), then the output
            c, _, h, w = x.shape
            for i, shape in enumerate([(c, self.out_d, h, w), (c, self.out_d, self.out_h, w)]):
                check_alloc(opt, shape, 4, f"the pass over axis {i + 1}")
            check_alloc(opt, (c, self.out_d, self.out_h, self.out_w), 4, "the output")
            return [pooling3d.adaptive_pool3d(x, self.pooling_type, (self.out_d, self.out_h, self.out_w))]
        pads = ((self.pad_front, self.pad_behind), (self.pad_top, self.pad_bottom), (self.pad_left, self.pad_right))
        padded = [n + b + a + s for n, (b, a), s in zip(x.shape[1:], pads, self._stride)]
        check_elements(x.shape[0] * int(np.prod(padded)), "the padded input")
        border = pooling3d.pooling3d_pads(x.shape[1:], self._kernel, self._stride, pads, self.pad_mode)
        padded = [n + b + a for n, (b, a) in zip(x.shape[1:], border)]
        check_window(opt, (x.shape[0], *padded),
                     (x.shape[0], *(out_extent(n, k, s) for n, k, s in zip(padded, self._kernel, self._stride))))
        try:
            y = pooling3d.window_pool3d(x, self.pooling_type, self._kernel, self._stride, pads, self.pad_mode,
                                        bool(self.avgpool_count_include_pad))
        except ValueError as e:
            raise ShapeError(f"Pooling3D on input {bottoms[0].shape}: {e}") from None
        return [y]
