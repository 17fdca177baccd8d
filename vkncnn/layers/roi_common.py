"""What the ROI layers (ROIPooling, ROIAlign, PSROIPooling) share: reading their inputs.

ncnn's ROI layers pool one box: the first four values of the ROI blob, read through a
flat pointer. A multi-channel ROI blob whose planes ncnn pads to 16 bytes would have
it read padding, so such blobs are refused.
"""

import numpy as np

from vkncnn.errors import ParamError, ShapeError


def roi_box(layer, blob: np.ndarray) -> np.ndarray:
    blob = np.asarray(blob, np.float32)
    first = blob[0] if blob.ndim >= 3 else blob
    if blob.ndim >= 3 and blob.shape[0] > 1 and first.size < 4:
        raise ShapeError(f"{layer.type} {layer.name!r}: ROI blob {blob.shape} spreads one box over channels; "
                         f"give the box as 4 values [x1, y1, x2, y2] (shape (4,) or (1, 4))")
    flat = first.reshape(-1)
    if flat.size < 4:
        raise ShapeError(f"{layer.type} {layer.name!r}: ROI blob needs 4 values [x1, y1, x2, y2], "
                         f"got shape {blob.shape}")
    return flat[:4]


def feature_planes(layer, blob: np.ndarray) -> np.ndarray:
    """The feature map as (c, h, w): ncnn reads a 1-D/2-D blob as one channel."""
    x = np.asarray(blob, np.float32)
    if x.ndim == 4:
        raise ShapeError(f"{layer.type} {layer.name!r} pools 2-D feature maps (c, h, w); got 4-D {x.shape}")
    return x.reshape((1,) * (3 - x.ndim) + x.shape)


def check_inputs(layer, bottoms) -> None:
    if len(bottoms) < 2:
        raise ShapeError(f"{layer.type} {layer.name!r} needs 2 bottoms (features, roi), got {len(bottoms)}")


def check_pooled(layer, pooled_w: int, pooled_h: int) -> None:
    if pooled_w <= 0 or pooled_h <= 0:
        raise ParamError(f"{layer.type} {layer.name!r}: pooled_width/pooled_height (params 0/1) must be > 0, "
                         f"got {pooled_w} x {pooled_h}")
