"""Pooling: 2-D max / average pooling over (h, w) of each channel.

Global pooling reduces each channel to one value; adaptive pooling produces a fixed
out_h x out_w; otherwise a kernel slides with strides over the padded input, with
ncnn's four padding modes (0 full/ceil, 1 valid, 2 SAME_UPPER, 3 SAME_LOWER).
A 2-D input pools as one channel; a 1-D input only allows global pooling; a 4-D
input is pooled on its first depth slice only, exactly as ncnn does.

GPU: shaders/pooling.comp (windowed and adaptive, one invocation per output item) and
shaders/pooling_global.comp (a shared-memory reduction per channel), elempack 1 and 4.
"""

import numpy as np

from vkncnn.cpu_fallback import pooling
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.gpu.vulkan.vkmat import use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

from .common.alloc_limit import check_window, out_extent


@register_layer("Pooling")
class Pooling(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.pooling_type = pd.get(0, 0)
        self.kernel_w = pd.get(1, 0)
        self.kernel_h = pd.get(11, self.kernel_w)
        self.stride_w = pd.get(2, 1)
        self.stride_h = pd.get(12, self.stride_w)
        self.pad_left = pd.get(3, 0)
        self.pad_right = pd.get(14, self.pad_left)
        self.pad_top = pd.get(13, self.pad_left)
        self.pad_bottom = pd.get(15, self.pad_top)
        self.global_pooling = pd.get(4, 0)
        self.pad_mode = pd.get(5, 0)
        self.avgpool_count_include_pad = pd.get(6, 0)
        self.adaptive_pooling = pd.get(7, 0)
        self.out_w = pd.get(8, 0)
        self.out_h = pd.get(18, self.out_w)
        if self.pooling_type not in (pooling.POOL_MAX, pooling.POOL_AVG):
            raise ParamError(f"Pooling: pooling_type {self.pooling_type} is not 0 (max) or 1 (avg)")
        if self.pad_mode not in (0, 1, 2, 3):
            raise ParamError(f"Pooling: pad_mode {self.pad_mode} is not 0-3")
        return 0

    def _check_sizes(self) -> None:
        if self.adaptive_pooling:
            if self.out_w <= 0 or self.out_h <= 0:
                raise ParamError(f"Pooling: adaptive output {self.out_h}x{self.out_w} must be positive")
        elif min(self.kernel_w, self.kernel_h, self.stride_w, self.stride_h) <= 0:
            raise ParamError(f"Pooling: kernel {self.kernel_h}x{self.kernel_w} and stride "
                             f"{self.stride_h}x{self.stride_w} must be positive")

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.size == 0:
            raise ShapeError(f"Pooling: input {x.shape} is empty, there is nothing to pool")
        if x.ndim == 1 and self.global_pooling:
            x = x.reshape(1, 1, -1)
        elif x.ndim == 2:
            x = x[None]  # one channel of h x w
        elif x.ndim == 4:
            # ncnn's Pooling walks each channel as one h x w image and so only ever reads
            # the first depth slice of a 4-D blob (Pooling3D is the layer for volumes)
            x = x[:, 0]
        elif x.ndim != 3:
            raise ShapeError(f"Pooling takes a 2-D, 3-D or 4-D blob (1-D only with global pooling), "
                             f"got shape {bottoms[0].shape}")

        if self.global_pooling:
            return [pooling.global_pool(x, self.pooling_type)]
        self._check_sizes()
        if self.adaptive_pooling:
            check_adaptive_budget(opt, x.shape, self.out_h, self.out_w)
            return [pooling.adaptive_pool(x, self.pooling_type, self.out_h, self.out_w)]
        check_window_budget(opt, x.shape, (self.kernel_h, self.kernel_w), (self.stride_h, self.stride_w),
                            (self.pad_top, self.pad_bottom, self.pad_left, self.pad_right), self.pad_mode)
        try:
            y = pooling.window_pool(
                x, self.pooling_type, (self.kernel_h, self.kernel_w), (self.stride_h, self.stride_w),
                (self.pad_top, self.pad_bottom, self.pad_left, self.pad_right), self.pad_mode,
                bool(self.avgpool_count_include_pad))
        except ValueError as e:
            raise ShapeError(f"Pooling on input {bottoms[0].shape}: {e}") from None
        return [y.astype(np.float32, copy=False)]

    # -- GPU ------------------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        fp16 = use_fp16_storage(opt, self.vkdev)
        name = "pooling_global" if self.global_pooling else "pooling"
        for pack4 in (0, 1):  # warm the device-wide cache; forward_gpu picks by the tensor
            gather.shader_pipeline(self.vkdev, name, fp16, [self.pooling_type], self._local_size(),
                                   defines={"PACK4": pack4})
        return 0

    def _local_size(self) -> tuple:
        return (64, 1, 1) if self.global_pooling else (8, 8, 1)

    def _pipeline(self, cmd, x, name: str, pack4: bool):
        return gather.shader_pipeline(cmd.vkdev, name, gather.storage_is_fp16(x), [self.pooling_type],
                                      self._local_size(), defines={"PACK4": int(pack4)})

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        ndim = len(shape)
        if ndim not in (2, 3, 4) and not (ndim == 1 and self.global_pooling):
            raise ShapeError(f"Pooling takes a 2-D, 3-D or 4-D blob (1-D only with global pooling), "
                             f"got shape {shape}")
        if 0 in shape:  # as the numpy path: a window over nothing has no value
            raise ShapeError(f"Pooling: input {shape} is empty, there is nothing to pool")
        if self.global_pooling:
            return [self._global_gpu(x, shape, cmd, opt)]
        self._check_sizes()
        if ndim == 2:  # one channel of h x w rows: the rows must not be packed
            x = cmd.vkdev.convert_packing(x, 1, cmd, opt)
            channels, h, w, cstep = 1, shape[0], shape[1], shape[0] * shape[1]
        else:
            channels, h, w, cstep = x.c, shape[-2], shape[-1], x.cstep
        geometry = self._adaptive_geometry(h, w) if self.adaptive_pooling else self._window_geometry(h, w, shape)
        outh, outw = geometry[1], geometry[0]
        check_alloc(opt, (channels * x.elempack, outh, outw), x.scalar_size(), "the output")  # sizes from params
        top = gather.new_like_shape((channels * x.elempack, outh, outw), x.elempack, x.scalar_size(), cmd, opt)
        constants = [w, h, cstep, outw, outh, outh * outw, channels] + geometry[2:]
        cmd.record_pipeline(self._pipeline(cmd, x, "pooling", x.elempack == 4), [x, top], constants,
                            (outw, outh, channels))
        return [top]

    def _global_gpu(self, x, shape, cmd, opt):
        if len(shape) <= 2:
            # everything folds into one value: the order of the scalars does not matter, and a
            # packed 1-D/2-D blob holds no padding lanes, so read it as plain scalars
            size, cstep, channels, pack4 = int(np.prod(shape)), 0, 1, False
            top = gather.new_like_shape((1,), 1, x.scalar_size(), cmd, opt)
        else:
            size, cstep, channels, pack4 = shape[-2] * shape[-1], x.cstep, x.c, x.elempack == 4
            top = gather.new_like_shape((shape[0],), x.elempack, x.scalar_size(), cmd, opt)
        cmd.record_pipeline(self._pipeline(cmd, x, "pooling_global", pack4), [x, top], [size, cstep, channels],
                            (64, channels, 1))
        return top

    def _adaptive_geometry(self, h: int, w: int) -> list:
        """[outw, outh, then the shader's window constants (unused), adaptive=1]."""
        return [self.out_w, self.out_h, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1]

    def _window_geometry(self, h: int, w: int, shape) -> list:
        """[outw, outh, kernel_w, kernel_h, stride_w, stride_h, pad_left, pad_top, exclude_pad,
        row_lo, row_hi, col_lo, col_hi, adaptive=0]: window_pool's rules, as numbers."""
        kernel, stride = (self.kernel_h, self.kernel_w), (self.stride_h, self.stride_w)
        pads = (self.pad_top, self.pad_bottom, self.pad_left, self.pad_right)
        border = pooling.pooling_pads(h, w, kernel, stride, pads, self.pad_mode)
        top, bottom, left, right = border
        H, W = h + top + bottom, w + left + right
        outh = (H - self.kernel_h) // self.stride_h + 1
        outw = (W - self.kernel_w) // self.stride_w + 1
        if outh <= 0 or outw <= 0 or H < self.kernel_h or W < self.kernel_w:
            raise ShapeError(f"Pooling on input {shape}: pooling window {self.kernel_h}x{self.kernel_w} "
                             f"does not fit the padded input {H}x{W}")
        exclude = int(self.pooling_type == pooling.POOL_AVG and not self.avgpool_count_include_pad)
        tail_h = border[1] - self.pad_bottom if self.pad_mode == 0 else 0
        tail_w = border[3] - self.pad_right if self.pad_mode == 0 else 0
        return [outw, outh, self.kernel_w, self.kernel_h, self.stride_w, self.stride_h, left, top, exclude,
                self.pad_top, H - self.pad_bottom - tail_h, self.pad_left, W - self.pad_right - tail_w, 0]


def check_window_budget(opt, shape: tuple, kernel, stride, pads, pad_mode: int) -> None:
    """window_pool's padded copy (its row and column passes are as large) and output, of a
    (c, h, w) input: pads come from params. pads: (top, bottom, left, right)."""
    c, h, w = shape
    top, bottom, left, right = pooling.pooling_pads(h, w, kernel, stride, pads, pad_mode)
    ph, pw = h + top + bottom, w + left + right
    check_window(opt, (c, ph, pw), (c, out_extent(ph, kernel[0], stride[0]), out_extent(pw, kernel[1], stride[1])))


def check_adaptive_budget(opt, shape: tuple, out_h: int, out_w: int) -> None:
    """adaptive_pool's output and its row pass (c, out_h, w): out_h/out_w are params."""
    check_alloc(opt, (shape[0], out_h, out_w), 4, "the output")
    check_alloc(opt, (shape[0], out_h, shape[2]), 4, "the row pass")
