"""The buffers of the window layers (convolutions, pooling, unfold), checked before numpy
or the device allocates them: pads, dilations and strides in the params, not the input,
make them large. Not a layer.

Two limits: `check_elements`, a ShapeError for a count no buffer of vkncnn's may reach
(mat.MAX_ELEMENTS, whatever the machine), and `check_window`, the memory budget
(vkncnn/memory_budget.py), which is per net and usually lower."""

from __future__ import annotations

import math

from vkncnn.array_checks import MAX_ELEMENTS
from vkncnn.errors import ShapeError
from vkncnn.memory_budget import budget_of, check_alloc


def check_elements(count: int, what: str) -> None:
    if count > MAX_ELEMENTS:
        raise ShapeError(f"{what} would hold {count} values, more than the {MAX_ELEMENTS} vkncnn allocates")


def check_window(opt, padded: tuple, out: tuple, columns: int = 0, itemsize: int = 4) -> None:
    """The padded input, the output and, when the kernel builds them, the im2col columns
    (a count of values) of one window layer."""
    largest = max(math.prod(map(int, padded)), math.prod(map(int, out)), columns)
    if largest * itemsize <= budget_of(opt):
        return  # every run of every convolution comes here: one comparison when all fit
    check_alloc(opt, padded, itemsize, "the padded input")
    check_alloc(opt, out, itemsize, "the output")
    if columns:
        check_alloc(opt, columns, itemsize, "the im2col columns")


def out_extent(padded: int, kernel: int, stride: int, dilation: int = 1) -> int:
    """Output positions of a window sliding over `padded` positions; <= 0 when it does not
    fit (the layer's own checks report that, the budget checks let it pass)."""
    return (padded - dilation * (kernel - 1) - 1) // stride + 1
