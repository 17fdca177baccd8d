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
    box = flat[:4]
    # the kernels turn scaled coordinates into pixel indices: NaN, inf or a coordinate
    # beyond any image (2^24) has no such index
    scaled = box.astype(np.float64) * float(getattr(layer, "spatial_scale", 1.0))
    if not np.all(np.abs(scaled) <= 1 << 24):
        raise ShapeError(f"{layer.type} {layer.name!r}: ROI box {box.tolist()} x spatial_scale "
                         f"{getattr(layer, 'spatial_scale', 1.0)} is not a box of pixel coordinates")
    return box


def feature_planes(layer, blob: np.ndarray) -> np.ndarray:
    """The feature map as (c, h, w): ncnn reads a 1-D/2-D blob as one channel."""
    x = np.asarray(blob, np.float32)
    if x.ndim == 4:
        raise ShapeError(f"{layer.type} {layer.name!r} pools 2-D feature maps (c, h, w); got 4-D {x.shape}")
    if x.size == 0:
        raise ShapeError(f"{layer.type} {layer.name!r}: feature map {x.shape} is empty, there is nothing to pool")
    return x.reshape((1,) * (3 - x.ndim) + x.shape)


def check_inputs(layer, bottoms) -> None:
    if len(bottoms) < 2:
        raise ShapeError(f"{layer.type} {layer.name!r} needs 2 bottoms (features, roi), got {len(bottoms)}")


def check_pooled(layer, pooled_w: int, pooled_h: int) -> None:
    if pooled_w <= 0 or pooled_h <= 0:
        raise ParamError(f"{layer.type} {layer.name!r}: pooled_width/pooled_height (params 0/1) must be > 0, "
                         f"got {pooled_w} x {pooled_h}")
