"""Reshape: the same values in row-major order under a new shape of 1-4 dims.

Params give the new extents innermost-first (w, h, d, c): 0 copies the input's extent,
-1 is inferred from the total, -233 drops the dim (the first -233 among w, h, c, d
decides how many dims remain: c=-233 gives 2-D even when d is set). shape_expr gives the
extents as an expression list over the input shapes instead (docs: expression.md).
A 1-D target always flattens the whole blob, as ncnn's x86 kernel does.

GPU: a view of the same buffer when the bytes agree (always in elempack 1; in elempack 4
when the packing axis and the positions per item stay), else a repacking copy
(shaders/gather.comp) in logical C order.
"""

import numpy as np

from vkncnn.cpu_fallback import shape
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

    def load_param(self, pd) -> int:
        self.w = pd.get(0, DROP)
        self.h = pd.get(1, DROP)
        self.d = pd.get(11, DROP)
        self.c = pd.get(2, DROP)
        self.shape_expr = pd.get(6, "")
        if self.shape_expr:  # the expression's list length decides the dims, at run time
            if shape.count_expression_blobs(self.shape_expr) > 1:
                self.one_blob_only = False
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

    def forward_cpu(self, bottoms, opt):
        return [bottoms[0].reshape(self._out_shape(bottoms))]

    def forward_gpu(self, bottoms, cmd, opt):
        out = self._out_shape([gather.fake(b.numpy_shape()) for b in bottoms])
        return [gather.reshape_to(bottoms[0], out, cmd, opt)]
