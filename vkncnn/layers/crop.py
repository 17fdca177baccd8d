"""Crop: cut a box out of a blob. Four ways to say which box, as ncnn reads them:

1. numpy-style slices (starts/ends/axes arrays, or *_expr expressions over input shapes):
   axis numpy-style over (c,[d],h,w), negatives count from the end, -233 = open end,
   and an end of 0 also means "to the end" (ncnn's `end > 0 ? end : size + end`);
2. offsets + sizes: woffset/hoffset/doffset/coffset, outw/outh/outd/outc
   (-233 = all that remains) and the tail offsets *offset2;
3. a reference blob (2nd input, all sizes 0): crop to its w/h/d (and c when it has as
   many dims), starting at the offset params;
4. woffset = -233 with a 2nd input: that blob holds the box as int32 words,
   [woff, hoff, coff, outw, outh, outc] (1-3 dims) or [woff, hoff, doff, coff, outw,
   outh, outd, outc] (4 dims).
A box that leaves the blob is an error (ncnn would read past its buffer).

GPU: a strided copy of the box (shaders/gather.comp), a view when the box is the whole
blob. Form 4 (the box read from the 2nd input's *data*) decides the output shape from
device data, which a recorded plan cannot do: that form runs on the CPU path.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer

OPEN = -233
AXES_OF_DIMS = {1: "w", 2: "hw", 3: "chw", 4: "cdhw"}  # numpy order of ncnn's named axes


@register_layer("Crop")
class Crop(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the copy reads either elempack

    def load_param(self, pd) -> int:
        self.offset = {"w": pd.get(0, 0), "h": pd.get(1, 0), "d": pd.get(13, 0), "c": pd.get(2, 0)}
        self.size = {"w": pd.get(3, 0), "h": pd.get(4, 0), "d": pd.get(14, 0), "c": pd.get(5, 0)}
        self.offset2 = {"w": pd.get(6, 0), "h": pd.get(7, 0), "d": pd.get(15, 0), "c": pd.get(8, 0)}
        self.starts = pd.get_int_array(9)
        self.ends = pd.get_int_array(10)
        self.axes = pd.get_int_array(11)
        self.starts_expr = pd.get(19, "")
        self.ends_expr = pd.get(20, "")
        self.axes_expr = pd.get(21, "")
        self.numpy_style = len(self.starts) > 0 and len(self.ends) > 0
        self.use_expr = bool(self.starts_expr) and bool(self.ends_expr)
        self.reference_form = (not any(self.size.values()) and not any(self.offset2.values())
                               and not self.numpy_style and not self.use_expr)
        if self.reference_form:
            self.one_blob_only = False
            # woffset = -233: the box is the 2nd input's int32 data, known only when it has run
            self.support_vulkan = self.offset["w"] != OPEN
        if self.use_expr and max(shape.count_expression_blobs(e) for e in
                                 (self.starts_expr, self.ends_expr, self.axes_expr)) > 1:
            self.one_blob_only = False
        return 0

    # -- box resolution: returns {axis letter: (offset, size)} ------------------------------
    def _slice_box(self, x, starts, ends, axes):
        dims = x.ndim
        letters = AXES_OF_DIMS[dims]
        if len(axes) == 0:
            axes = list(range(dims))
        if len(starts) < len(axes) or len(ends) < len(axes):
            raise ShapeError(f"Crop: {len(axes)} axes but {len(starts)} starts and {len(ends)} ends")
        box = {}
        for axis, start, end in zip(axes, starts, ends):
            axis = 0 if dims == 1 else shape.positive_axis(int(axis), dims)  # 1-D: every axis is w
            if not 0 <= axis < dims:
                raise ShapeError(f"Crop: axis {axis} out of range for a {dims}-D blob {x.shape}")
            n = x.shape[axis]
            start = 0 if start == OPEN else int(start)
            end = n if end == OPEN else int(end)
            offset = start if start >= 0 else n + start
            box[letters[axis]] = (offset, min(n, end if end > 0 else n + end) - offset)
        return box

    def _param_box(self, x):
        box = {}
        for letter, n in zip(AXES_OF_DIMS[x.ndim], x.shape):
            size = n - self.offset[letter] - self.offset2[letter]
            if self.size[letter] != OPEN:
                size = min(self.size[letter], size)
            box[letter] = (self.offset[letter], size)
        return box

    def _reference_box(self, x, ref):
        rdims, rw, rh, rd, rc = shape.ncnn_shape(ref)
        ref_size = {"w": rw, "h": rh, "d": rd, "c": rc if rdims == x.ndim else x.shape[0]}
        return {letter: (self.offset[letter], ref_size[letter]) for letter in AXES_OF_DIMS[x.ndim]}

    def _words_box(self, x, ref):
        words = np.ascontiguousarray(ref, np.float32).view(np.int32).ravel()
        order = "whdc" if x.ndim == 4 else "whc"
        need = 2 * len(order)
        if words.size < need:
            raise ShapeError(f"Crop with woffset=-233 reads {need} int32 words from its 2nd input, "
                             f"which has {words.size}")
        offsets = dict(zip(order, words[:len(order)]))
        sizes = dict(zip(order, words[len(order):need]))
        return {letter: (int(offsets[letter]), int(sizes[letter])) for letter in AXES_OF_DIMS[x.ndim]}

    def _box(self, bottoms):
        x = bottoms[0]
        if self.use_expr:
            try:
                starts = shape.eval_list_expression(self.starts_expr, bottoms)
                ends = shape.eval_list_expression(self.ends_expr, bottoms)
                axes = shape.eval_list_expression(self.axes_expr, bottoms) if self.axes_expr else []
            except ValueError as e:
                raise ShapeError(f"Crop expression: {e}") from None
            return self._slice_box(x, starts, ends, axes)
        if self.numpy_style:
            return self._slice_box(x, self.starts, self.ends, self.axes)
        if self.reference_form:
            if len(bottoms) < 2:
                raise ShapeError("Crop without sizes or slices crops to a reference blob: it needs 2 inputs")
            if self.offset["w"] == OPEN:
                return self._words_box(x, bottoms[1])
            return self._reference_box(x, bottoms[1])
        return self._param_box(x)

    def _checked_box(self, bottoms) -> list[tuple[int, int]]:
        """(offset, size) per numpy axis of the first input, checked to fit in it."""
        x = bottoms[0]
        if not 1 <= x.ndim <= 4:
            raise ShapeError(f"Crop takes a 1-D to 4-D blob, got shape {x.shape}")
        box = self._box(bottoms)
        out = []
        for letter, n in zip(AXES_OF_DIMS[x.ndim], x.shape):
            offset, size = box.get(letter, (0, n))
            if offset < 0 or size <= 0 or offset + size > n:
                raise ShapeError(f"Crop: box {letter} = [{offset}, {offset + size}) does not fit in "
                                 f"0..{n} of input {x.shape}")
            out.append((int(offset), int(size)))
        return out

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        index = tuple(slice(offset, offset + size) for offset, size in self._checked_box(bottoms))
        y = x[index]
        return [x if y.shape == x.shape else np.ascontiguousarray(y)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        in_shape = x.numpy_shape()
        box = self._checked_box([gather.fake(b.numpy_shape()) for b in bottoms])
        out_shape = tuple(size for _, size in box)
        if out_shape == in_shape:
            return [gather.view(x, in_shape)]
        in_strides = gather.c_strides(in_shape)
        base = sum(offset * stride for (offset, _), stride in zip(box, in_strides))
        top = gather.new_like_shape(out_shape, gather.output_elempack(out_shape, opt), x.scalar_size(), cmd, opt)
        gather.record_strided_copy(cmd, x, top, out_shape, in_strides, gather.c_strides(out_shape), src_base=base)
        return [top]
