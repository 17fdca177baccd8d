"""Interp: resize the (h, w) plane of each channel: nearest, bilinear or bicubic.

The output size comes from, in order of precedence: a `size_expr` over the input shapes,
a second input blob whose w/h are the target (dynamic_target_size=1), the output_w/h
params, or the scale params (out = (int)(in * scale), only when a size param is 0).

ncnn's quirks are kept: a 2-D input (h, w) is resized along w only; a 1-D input of w
values becomes a 3-D blob of w channels, each filled with its value; a 4-D input is
resized from its first depth slice into a 3-D blob; when sizes come
from scale params, the source step is 1/scale rather than in/out.
"""

import math

import numpy as np

from vkncnn.cpu_fallback import resize, shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.gpu.vulkan.vkmat import use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

NEAREST, BILINEAR, BICUBIC = 1, 2, 3


@register_layer("Interp")
class Interp(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.resize_type = pd.get(0, 0)
        self.height_scale = pd.get(1, 1.0)
        self.width_scale = pd.get(2, 1.0)
        self.output_height = pd.get(3, 0)
        self.output_width = pd.get(4, 0)
        self.dynamic_target_size = pd.get(5, 0)
        self.align_corner = pd.get(6, 0)
        self.size_expr = pd.get(9, "")
        if not 0 <= self.resize_type <= 3:
            raise ParamError(f"Interp: resize_type {self.resize_type} is not 1 (nearest), "
                             f"2 (bilinear) or 3 (bicubic)")
        if self.dynamic_target_size == 1:
            self.one_blob_only = False
        if self.size_expr and shape.count_expression_blobs(self.size_expr) > 1:
            self.one_blob_only = False
        return 0

    # -- output size --------------------------------------------------------------------
    def _target_size(self, bottoms):
        x = bottoms[0]
        dynamic = self.dynamic_target_size == 1
        if dynamic:
            if len(bottoms) < 2:
                raise ShapeError("Interp with dynamic_target_size=1 needs a second input (the size reference)")
            _, outw, outh, _, _ = shape.ncnn_shape(bottoms[1])
        else:
            _, w, h, _, _ = shape.ncnn_shape(x)
            if x.ndim == 1:
                w = h = 1
            outw, outh = self.output_width, self.output_height
            if outw == 0 or outh == 0:
                scaled = (np.float32(w) * np.float32(self.width_scale), np.float32(h) * np.float32(self.height_scale))
                if not all(np.isfinite(v) and abs(v) < 2**31 for v in scaled):
                    raise ShapeError(f"Interp: scales {self.height_scale} x {self.width_scale} of input {x.shape} "
                                     f"give no output size")
                outw, outh = int(scaled[0]), int(scaled[1])
        if self.size_expr:
            try:
                sizes = shape.eval_list_expression(self.size_expr, list(bottoms))
            except ValueError as e:
                raise ShapeError(f"Interp size_expr: {e}") from None
            if not 1 <= len(sizes) <= 2:
                raise ShapeError(f"Interp size_expr {self.size_expr!r} gave {len(sizes)} values, expected 1 or 2")
            outw = sizes[0]
            outh = sizes[1] if len(sizes) == 2 else shape.ncnn_shape(x)[2]
        return outw, outh

    def _steps(self, w, h, outw, outh):
        """Source step per output pixel along w and h: in/out for given sizes, 1/scale otherwise."""
        by_size = self.dynamic_target_size == 1 or bool(self.size_expr)
        if by_size or self.output_width:
            w_near, w_lin = np.float32(w) / np.float32(outw), w / outw
        else:
            w_near, w_lin = np.float32(1) / np.float32(self.width_scale), 1.0 / float(np.float32(self.width_scale))
        if outh == 0:  # a 2-D blob, whose rows stay: no step along h
            h_near, h_lin = np.float32(1), 1.0
        elif by_size or self.output_height:
            h_near, h_lin = np.float32(h) / np.float32(outh), h / outh
        else:
            h_near, h_lin = np.float32(1) / np.float32(self.height_scale), 1.0 / float(np.float32(self.height_scale))
        return w_near, w_lin, h_near, h_lin

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        outw, outh = self._target_size(bottoms)
        if x.size == 0:
            # nothing to resize: an empty result when the output is empty too (ncnn answers an
            # empty Mat), else the checks below refuse it (ncnn divides by zero there)
            empty = _output_shape(x.shape, max(outh, 0), max(outw, 0))
            if empty is not None and 0 in empty:
                return [np.zeros(empty, np.float32)]
        if outw <= 0 or (outh <= 0 and x.ndim != 2):  # a 2-D blob keeps its rows: outh unused
            raise ShapeError(f"Interp: output size {outh}x{outw} for input {x.shape} is not positive")

        if x.ndim == 1:
            # ncnn: "2d resize on a flattened blob", each value fills one channel
            _check_budget(opt, x.shape, outh, outw, 4)
            return [np.broadcast_to(x[:, None, None], (x.shape[0], outh, outw)).astype(np.float32)]
        if x.ndim not in (2, 3, 4):
            raise ShapeError(f"Interp takes a 1-D to 4-D blob, got shape {x.shape}")

        h, w = (1, x.shape[-1]) if x.ndim == 2 else x.shape[-2:]
        if h == 0 or w == 0 or (x.ndim == 4 and x.shape[1] == 0):  # no pixel to interpolate from
            raise ShapeError(f"Interp: input {x.shape} is empty, cannot resize it to {outh}x{outw}")
        if x.ndim == 2:
            if outw == w:
                return [x]
            resize_h = None  # 2-D: rows stay, only w is resized
        else:
            if outw == w and outh == h:
                return [x]
            resize_h = outh
            if x.ndim == 4:
                # ncnn walks each channel as one h x w image: only the first depth slice
                # of a 4-D blob is read, and the result is 3-D (Interp has no depth axis)
                x = x[:, 0]
        if self.resize_type == 0:
            raise ParamError("Interp: resize_type is 0 (unset); use 1 nearest, 2 bilinear or 3 bicubic")
        _check_budget(opt, x.shape, outh, outw, 4, numpy_passes=True)

        w_near, w_lin, h_near, h_lin = self._steps(w, h, outw, outh)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.resize_type == NEAREST:
                y = resize.resize_nearest(x, resize_h, outw, h_near, w_near)
            else:
                y = resize.resize_linear(x, resize_h, outw, bool(self.align_corner), h_lin, w_lin,
                                         cubic=self.resize_type == BICUBIC)
        return [y.astype(np.float32, copy=False)]

    # -- GPU ------------------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        fp16 = use_fp16_storage(opt, self.vkdev)
        for pack4 in (0, 1):  # warm the device-wide cache; forward_gpu picks by the tensor
            gather.shader_pipeline(self.vkdev, "interp", fp16, (), (8, 8, 1), defines={"PACK4": pack4})
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        outw, outh = self._target_size([gather.fake(b.numpy_shape()) for b in bottoms])
        if math.prod(shape) == 0:  # as forward_cpu: an empty input to an empty output
            empty = _output_shape(shape, max(outh, 0), max(outw, 0))
            if empty is not None and 0 in empty:
                return [gather.new_like_shape(empty, 1, x.scalar_size(), cmd, opt)]
        if outw <= 0 or (outh <= 0 and len(shape) != 2):  # a 2-D blob keeps its rows: outh unused
            raise ShapeError(f"Interp: output size {outh}x{outw} for input {shape} is not positive")
        ndim = len(shape)
        if ndim == 1:
            # every value fills one output channel: a 1x1 plane per channel item
            _check_budget(opt, shape, outh, outw, x.scalar_size())
            geometry = (x.w, 1, 1, 1)
            ofs_w, wt_w = np.zeros(outw, np.int64), np.ones((outw, 1), np.float32)
            ofs_h, wt_h = np.zeros(outh, np.int64), np.ones((outh, 1), np.float32)
            out_shape = (shape[0], outh, outw)
        elif ndim in (2, 3, 4):
            h, w = (1, shape[-1]) if ndim == 2 else shape[-2:]
            if outw == w and (ndim == 2 or outh == h):
                return [gather.view(x, shape)]
            if h == 0 or w == 0:
                raise ShapeError(f"Interp: input {shape} has an empty plane; there is nothing to resize "
                                 f"to {outh}x{outw}")
            if self.resize_type == 0:
                raise ParamError("Interp: resize_type is 0 (unset); use 1 nearest, 2 bilinear or 3 bicubic")
            _check_budget(opt, shape, outh, outw, x.scalar_size())  # before the tables too
            if ndim == 2:  # rows stay: each item of (packed) rows is a 1-row plane
                geometry = (x.h, 1, w, w)
                out_shape = (shape[0], outw)
                ofs_w, wt_w = self._axis_table(w, outw, h, outh, "w")
                ofs_h, wt_h = _identity(1)
                outh = 1
            else:
                geometry = (x.c, h, w, x.cstep)
                out_shape = (shape[0], outh, outw)
                ofs_w, wt_w = self._axis_table(w, outw, h, outh, "w")
                ofs_h, wt_h = self._axis_table(w, outw, h, outh, "h")
        else:
            raise ShapeError(f"Interp takes a 1-D to 4-D blob, got shape {shape}")

        channels, in_h, in_w, cstep = geometry
        parts = [ofs_w.astype(np.int32), wt_w.astype(np.float32).view(np.int32).ravel(),
                 ofs_h.astype(np.int32), wt_h.astype(np.float32).view(np.int32).ravel()]
        starts = np.cumsum([0] + [len(part) for part in parts])[:4]
        table = cmd.record_upload(np.concatenate(parts), opt, elempack=1)
        top = gather.new_like_shape(out_shape, x.elempack, x.scalar_size(), cmd, opt)
        pipeline = gather.shader_pipeline(cmd.vkdev, "interp", gather.storage_is_fp16(x), (), (8, 8, 1),
                                          defines={"PACK4": int(x.elempack == 4)})
        constants = [in_w, in_h, cstep, outw, outh, outw * outh, channels, wt_w.shape[1], wt_h.shape[1],
                     *[int(v) for v in starts]]
        cmd.record_pipeline(pipeline, [x, top, table], constants, (outw, outh, channels))
        return [top]

    def _axis_table(self, w: int, outw: int, h: int, outh: int, axis: str):
        """(first source index of each output position's taps, tap weights) along w or h."""
        w_near, w_lin, h_near, h_lin = self._steps(w, h, outw, outh)
        n, out, near, lin = (w, outw, w_near, w_lin) if axis == "w" else (h, outh, h_near, h_lin)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.resize_type == NEAREST:
                return resize.nearest_index(n, out, near), np.ones((out, 1), np.float32)
            if self.resize_type == BILINEAR:
                if out == n:  # ncnn's bilinear copies an axis whose size does not change
                    return _identity(n)
                return resize.linear_coeffs(n, out, bool(self.align_corner), lin)
            ofs, weights = resize.cubic_coeffs(n, out, bool(self.align_corner), lin)
            return ofs - 1, weights  # bicubic taps start one pixel before the offset


def _check_budget(opt, shape: tuple, outh: int, outw: int, itemsize: int, numpy_passes: bool = False) -> None:
    """Sizes come from params or a size expression: refuse a huge output before any table or
    pass is made. numpy's horizontal pass (h rows of outw) can be larger than the output."""
    if len(shape) == 1:
        check_alloc(opt, (shape[0], outh, outw), itemsize, "the output")
    elif len(shape) == 2:
        check_alloc(opt, (shape[0], outw), itemsize, "the output")
    elif len(shape) in (3, 4):
        check_alloc(opt, (shape[0], outh, outw), itemsize, "the output")
        if numpy_passes and shape[-2] > outh:
            check_alloc(opt, (shape[0], shape[-2], outw), itemsize, "the horizontal pass")


def _identity(n: int):
    return np.arange(n), np.ones((n, 1), np.float32)


def _output_shape(shape: tuple, outh: int, outw: int):
    """The numpy shape Interp gives a blob of `shape` (None for a rank it does not take)."""
    if len(shape) in (1, 3):  # a 1-D blob's values each fill a channel
        return (shape[0], outh, outw)
    if len(shape) == 2:  # rows stay
        return (shape[0], outw)
    if len(shape) == 4:
        return (shape[0], shape[1], outh, outw)
    return None
