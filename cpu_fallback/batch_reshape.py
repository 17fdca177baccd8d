"""Reshape across the batch: ncnn's Reshape with input_batch_axis / output_batch_axis (pd 12/13).

A batched blob holds n items of one shape. Here it is an ndarray whose leading axis is the
batch (length n), followed by one item's numpy shape: (w,), (h, w), (c, h, w) or
(c, d, h, w), as pyncnn's `Mat.numpy(batch_index=0)` gives it. A blob of n == 1 may come
without that leading axis (then it is one item); `has_batch_axis` says which, and defaults
to "the leading axis is there exactly when n > 1". The result has the leading axis when
the input had it or when it holds more than one item.

The reshape works on logical shapes that include the batch: the input's batch axis is
put back at `input_batch_axis` among the item's axes (233: the input has no batch axis and
n must be 1), the values are laid out anew in C order under the target shape, and the
target's axis `output_batch_axis` becomes the batch of the result (233: the result is one
item). So `x.reshape(b * h, w)` in PyTorch is input axis 0, output axis 233, and the way
back, `y.reshape(b, h, w)`, is input axis 233, output axis 0 with the batch in the first
extent.

The target is given outermost first (numpy order), batch axis included where there is
one: a Reshape's params (c, d, h, w) by its dims, or its shape expression's list reversed.
In it, 0 copies the logical input's extent at the same position and one -1 is inferred.
Where ncnn's Reshape returns -1, a ShapeError says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from vkncnn.errors import ShapeError

NO_BATCH_AXIS = 233
MAX_ITEM_DIMS = 4  # an ncnn Mat holds at most (c, d, h, w)
MAX_TARGET_DIMS = 5  # an item of four dims plus the batch axis


@dataclass(frozen=True)
class BatchReshapePlan:
    """What a batch reshape does, resolved from the input's shape and the layer's params."""

    logical_in: tuple[int, ...]   # the input with its batch axis in place
    in_axis: int                  # where the batch sits in logical_in; NO_BATCH_AXIS if nowhere
    logical_out: tuple[int, ...]  # the target with 0 and -1 resolved
    out_axis: int                 # which axis of logical_out is the result's batch; NO_BATCH_AXIS if none
    out_item_shape: tuple[int, ...]  # one item of the result, numpy order
    out_n: int                    # how many items the result holds


def _normalised_axis(axis: int, ndim: int, what: str) -> int:
    """A batch axis as ncnn reads it: negative counts from the end of a rank-`ndim` shape."""
    if axis == NO_BATCH_AXIS:
        return axis
    if axis < 0:
        axis += ndim
    if not 0 <= axis < ndim:
        raise ShapeError(f"Reshape: {what} is out of range for a logical shape of {ndim} dims")
    return axis


def plan_batch_reshape(item_shape: tuple[int, ...], n: int, target: list[int],
                       input_batch_axis: int, output_batch_axis: int) -> BatchReshapePlan:
    """Resolve a batch reshape of n items of `item_shape` (numpy order) to `target`."""
    item_shape = tuple(int(v) for v in item_shape)
    if not 1 <= len(item_shape) <= MAX_ITEM_DIMS:
        raise ShapeError(f"Reshape: an item has 1-{MAX_ITEM_DIMS} dims, got shape {item_shape}")
    if n < 1:
        raise ShapeError(f"Reshape: a batch holds at least one item, got n={n}")

    # the logical input: the batch axis back among the item's axes
    if input_batch_axis == NO_BATCH_AXIS:
        if n != 1:
            raise ShapeError(f"Reshape: the input is a batch of {n} but input_batch_axis (pd 12) is 233 "
                             f"(no batch axis)")
        in_axis, logical_in = NO_BATCH_AXIS, item_shape
    else:
        in_axis = _normalised_axis(input_batch_axis, len(item_shape) + 1,
                                   f"input_batch_axis {input_batch_axis} (pd 12)")
        logical_in = item_shape[:in_axis] + (n,) + item_shape[in_axis:]
    total = prod(logical_in)

    if not 1 <= len(target) <= MAX_TARGET_DIMS:
        raise ShapeError(f"Reshape: the target shape {list(target)} has {len(target)} dims, "
                         f"expected 1-{MAX_TARGET_DIMS}")
    out_axis = _normalised_axis(output_batch_axis, len(target), f"output_batch_axis {output_batch_axis} (pd 13)")

    # 0 copies the logical input's extent, one -1 takes what is left
    resolved: list[int] = []
    infer_at = None
    for i, v in enumerate(int(v) for v in target):
        if v == 0:
            if i >= len(logical_in):
                raise ShapeError(f"Reshape: target {list(target)} copies extent {i} (0) of the logical input "
                                 f"{logical_in}, which has only {len(logical_in)} dims")
            v = logical_in[i]
        if v == -1:
            if infer_at is not None:
                raise ShapeError(f"Reshape: target {list(target)} has more than one -1")
            infer_at = i
        elif v <= 0:
            raise ShapeError(f"Reshape: target {list(target)} has extent {v} at position {i}")
        resolved.append(v)
    known = prod(v for i, v in enumerate(resolved) if i != infer_at)
    if infer_at is not None:
        if total % known:
            raise ShapeError(f"Reshape: cannot infer the -1 of {list(target)}: {total} values of "
                             f"{logical_in} are not a multiple of {known}")
        resolved[infer_at] = total // known
    logical_out = tuple(resolved)
    if prod(logical_out) != total:
        raise ShapeError(f"Reshape: cannot view the logical input {logical_in} ({total} values) "
                         f"as {logical_out}")

    # the result's batch comes out of the target
    out_n = 1 if out_axis == NO_BATCH_AXIS else logical_out[out_axis]
    out_item = tuple(v for i, v in enumerate(logical_out) if i != out_axis)
    if not 1 <= len(out_item) <= MAX_ITEM_DIMS:
        raise ShapeError(f"Reshape: {logical_out} without its batch axis {out_axis} leaves {len(out_item)} "
                         f"dims; an item has 1-{MAX_ITEM_DIMS}")
    return BatchReshapePlan(logical_in, in_axis, logical_out, out_axis, out_item, out_n)


def reshape_batched(data: np.ndarray, n: int, target: list[int], input_batch_axis: int,
                    output_batch_axis: int, *, has_batch_axis: bool | None = None) -> tuple[np.ndarray, int]:
    """Reshape n items (see the module docstring for the layout) to `target`; returns (out, out_n)."""
    if has_batch_axis is None:
        has_batch_axis = n > 1
    if has_batch_axis and (data.ndim < 2 or data.shape[0] != n):
        raise ShapeError(f"Reshape: a batch of {n} needs a leading axis of {n}, got an array of shape {data.shape}")
    batch = data if has_batch_axis else data[np.newaxis]
    plan = plan_batch_reshape(batch.shape[1:], n, target, input_batch_axis, output_batch_axis)

    # C order of the logical input: the batch axis moved from the front to its place
    logical = batch[0] if plan.in_axis == NO_BATCH_AXIS else np.moveaxis(batch, 0, plan.in_axis)
    out = np.ascontiguousarray(logical).reshape(plan.logical_out)
    if plan.out_axis == NO_BATCH_AXIS:
        out = out[np.newaxis]
    else:
        out = np.ascontiguousarray(np.moveaxis(out, plan.out_axis, 0))
    if not has_batch_axis and plan.out_n == 1:
        out = out[0]
    return out, plan.out_n
