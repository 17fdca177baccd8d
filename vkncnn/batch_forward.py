"""Batched blobs (ncnn's Mat.n > 1) through layers that run one item at a time.

A batched blob is a numpy array with the batch axis in front, (n,) + the item's shape,
and its n recorded beside it by the extractor. As in ncnn, a layer that declares
`support_batch` sees the whole batch (`forward_cpu_batch`); so does one marked
`batch_native` (a layer whose result for the stacked batch is by construction the stack of
its per-item results: InnerProduct folds the items into its matrix rows, elementwise
activations see one bigger array). Every other layer runs once per item, unbatched blobs
given whole to each item, and its outputs are stacked back.
Unlike ncnn, items whose outputs differ in shape (a detection layer keeping a different
number of boxes per image) are an error naming the layer, not a buffer overrun.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .errors import ShapeError

if TYPE_CHECKING:
    from .layer import Layer
    from .option import Option


def batch_size(layer: Layer, sizes: list[int]) -> int:
    """The batch the layer's bottoms share: every batched bottom must have the same n."""
    batched = {n for n in sizes if n > 1}
    if len(batched) > 1:
        raise ShapeError(f"layer {layer.name!r} ({layer.type}): its bottoms have batch sizes {sizes}; "
                         f"batched bottoms must share one n")
    return batched.pop() if batched else 1


def item(data: np.ndarray, n: int, b: int) -> np.ndarray:
    return data[b] if n > 1 else data


def stack_items(what: str, items: list[np.ndarray]) -> np.ndarray:
    """The items of one output as a batch; they must agree in shape."""
    shapes = {a.shape for a in items}
    if len(shapes) > 1:
        raise ShapeError(f"{what}: the items of the batch give outputs of different shapes "
                         f"{[a.shape for a in items]}; run these items one by one")
    return np.stack(items)


def forward_batched(layer: Layer, bottoms: list[np.ndarray], sizes: list[int],
                    opt: Option) -> tuple[list[np.ndarray], list[int]]:
    """(tops, their batch sizes) of one layer over batched bottoms."""
    n = batch_size(layer, sizes)
    if getattr(layer, "support_batch", False) and hasattr(layer, "forward_cpu_batch"):
        # also for n == 1: such a layer may make a batch (Reshape moving rows to the batch axis)
        return layer.forward_cpu_batch(bottoms, sizes, opt)
    if n > 1 and getattr(layer, "batch_native", False):
        tops = layer.forward_cpu_batch(bottoms, sizes, opt)
        if tops is not None:  # None: this input's layout has no batched form, run per item
            return tops, [n] * len(tops)
    per_item = [layer.forward_cpu([item(x, s, b) for x, s in zip(bottoms, sizes)], opt) for b in range(n)]
    tops = [stack_items(f"layer {layer.name!r} ({layer.type}) top {t}", [outs[t] for outs in per_item])
            for t in range(len(per_item[0]))]
    return tops, [n] * len(tops)
