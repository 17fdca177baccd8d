"""Reshape: the same values in row-major order under a new shape of 1-4 dims.

Params give the new extents innermost-first (w, h, d, c): 0 copies the input's extent,
-1 is inferred from the total, -233 drops the dim (the first -233 among w, h, c, d
decides how many dims remain: c=-233 gives 2-D even when d is set). shape_expr gives the
extents as an expression list over the input shapes instead (docs: expression.md).
A 1-D target always flattens the whole blob, as ncnn's x86 kernel does.

input_batch_axis / output_batch_axis (pd 12/13, 233 = none): with either set the layer
reshapes across the batch (support_batch): the target then lists extents outermost first
over logical shapes that include the batch axis (cpu_fallback/batch_reshape.py), as pnnx
writes for `x.reshape(b * h, w)` and the way back.

GPU: a view of the same buffer when the bytes agree (always in elempack 1; in elempack 4
when the packing axis and the positions per item stay), else a repacking copy
(shaders/gather.comp) in logical C order.
"""

import numpy as np

from vkncnn.cpu_fallback import batch_reshape, shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer

DROP = -233


@register_layer("Reshape")
class Reshape(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # a view or a copy, from either elempack
        self.support_batch = False  # True with pd 12/13: forward_cpu_batch sees the whole batch

    def load_param(self, pd) -> int:
        self.w = pd.get(0, DROP)
        self.h = pd.get(1, DROP)
        self.d = pd.get(11, DROP)
        self.c = pd.get(2, DROP)
        self.shape_expr = pd.get(6, "")
        self.input_batch_axis = pd.get(12, batch_reshape.NO_BATCH_AXIS)
        self.output_batch_axis = pd.get(13, batch_reshape.NO_BATCH_AXIS)
        no_axis = batch_reshape.NO_BATCH_AXIS
        self.support_batch = (self.input_batch_axis, self.output_batch_axis) != (no_axis, no_axis)
        if self.shape_expr:  # the expression's list length decides the dims, at run time
            if shape.count_expression_blobs(self.shape_expr) > 1:
                self.one_blob_only = False
            if self.support_batch:
                self._check_batch_expression_rank()
            return 0
        self.ndim = 4
        if self.d == DROP:
            self.ndim = 3
        if self.c == DROP:
            self.ndim = 2
        if self.h == DROP:
            self.ndim = 1
        if self.w == DROP:
            raise ParamError("Reshape: w is -233 (no dims left); give at least the w param")
        return 0

    def _check_batch_expression_rank(self) -> None:
        """As ncnn at load: a batch target lists at most 5 extents, 4 when none is the batch."""
        placeholders = [np.zeros((1,), np.float32)] * shape.count_expression_blobs(self.shape_expr)
        try:
            rank = len(shape.eval_list_expression(self.shape_expr, placeholders))
        except ValueError as e:
            raise ParamError(f"Reshape shape_expr: {e}") from None
        most = 4 if self.output_batch_axis == batch_reshape.NO_BATCH_AXIS else 5
        if rank > most:
            raise ParamError(f"Reshape shape_expr {self.shape_expr!r} lists {rank} extents; with "
                             f"output_batch_axis {self.output_batch_axis} at most {most}")

    def _target(self, bottoms):
        """(ndim, [w, h, d, c]) before 0/-1 resolution."""
        if not self.shape_expr:
            return self.ndim, [self.w, self.h, self.d, self.c]
        try:
            sizes = shape.eval_list_expression(self.shape_expr, bottoms)
        except ValueError as e:
            raise ShapeError(f"Reshape shape_expr: {e}") from None
        if not 1 <= len(sizes) <= 4:
            raise ShapeError(f"Reshape shape_expr {self.shape_expr!r} gave {len(sizes)} extents, expected 1-4")
        w, h, d, c = (sizes + [1, 1, 1])[:4] if len(sizes) != 3 else (sizes[0], sizes[1], 1, sizes[2])
        return len(sizes), [w, h, d, c]

    def _out_shape(self, bottoms) -> tuple:
        """The numpy shape of the result (bottoms: arrays, or fakes with their shapes)."""
        x = bottoms[0]
        total = x.size
        ndim, (w, h, d, c) = self._target(bottoms)
        if ndim == 1:
            return (total,)
        _, bw, bh, bd, bc = shape.ncnn_shape(x)
        w = bw if w == 0 else w
        h = bh if h == 0 else h
        d = (bd if d == 0 else d) if ndim == 4 else 1
        c = (bc if c == 0 else c) if ndim >= 3 else 1
        # ncnn resolves -1 in this order, each from the extents known so far (C division)
        known = {"w": w, "h": h, "d": d, "c": c}
        for name in "whdc":
            if known[name] == -1:
                rest = [known[k] for k in "whdc" if k != name]
                if any(v <= 0 for v in rest):
                    raise ShapeError(f"Reshape {x.shape}: cannot infer {name} with other extents {known}")
                known[name] = total // int(np.prod(rest))
        out = shape.numpy_shape(ndim, known["w"], known["h"], known["d"], known["c"])
        if min(out) <= 0 or int(np.prod(out)) != total:
            raise ShapeError(f"Reshape: cannot view {x.shape} ({total} values) as {out}")
        return out

    def _batch_target(self, items, batch_sizes) -> list[int]:
        """The target of a batch reshape, outermost first (items: one item of each bottom)."""
        if not self.shape_expr:
            return {1: [self.w], 2: [self.h, self.w], 3: [self.c, self.h, self.w],
                    4: [self.c, self.d, self.h, self.w]}[self.ndim]
        try:
            sizes = shape.eval_list_expression(self.shape_expr, items, batch_sizes)
        except ValueError as e:
            raise ShapeError(f"Reshape shape_expr: {e}") from None
        return sizes[::-1]

    def _single_batch_shape(self, bottoms) -> tuple:
        """A batch reshape of one item: the result must be one item too."""
        plan = batch_reshape.plan_batch_reshape(bottoms[0].shape, 1, self._batch_target(bottoms, None),
                                                self.input_batch_axis, self.output_batch_axis)
        if plan.out_n != 1:
            raise ShapeError(f"Reshape: {bottoms[0].shape} becomes a batch of {plan.out_n} items of "
                             f"{plan.out_item_shape}; run the layer through forward_cpu_batch")
        return plan.out_item_shape

    def forward_cpu(self, bottoms, opt):
        if self.support_batch:  # one item: C order is the same with or without the batch axis
            return [bottoms[0].reshape(self._single_batch_shape(bottoms))]
        return [bottoms[0].reshape(self._out_shape(bottoms))]

    def forward_cpu_batch(self, bottoms, batch_sizes, opt):
        """The whole batch at once: a bottom of n > 1 items carries a leading axis of n, one of
        n == 1 is a single item. Returns (tops, top_batch_sizes) in the same convention."""
        if not self.support_batch:
            raise ShapeError("Reshape without input_batch_axis/output_batch_axis (pd 12/13) runs item by item "
                             "through forward_cpu")
        if len(batch_sizes) != len(bottoms):
            raise ShapeError(f"Reshape: {len(batch_sizes)} batch sizes for {len(bottoms)} bottom(s)")
        items = [b[0] if n > 1 else b for b, n in zip(bottoms, batch_sizes)]
        out, out_n = batch_reshape.reshape_batched(bottoms[0], batch_sizes[0], self._batch_target(items, batch_sizes),
                                                   self.input_batch_axis, self.output_batch_axis)
        if out_n == 1 and batch_sizes[0] > 1:  # the batch folded into one item: no leading axis
            out = out[0]
        return [out], [out_n]

    def forward_gpu(self, bottoms, cmd, opt):
        fakes = [gather.fake(b.numpy_shape()) for b in bottoms]
        out = self._single_batch_shape(fakes) if self.support_batch else self._out_shape(fakes)
        return [gather.reshape_to(bottoms[0], out, cmd, opt)]
