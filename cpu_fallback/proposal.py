"""Faster R-CNN region proposals: anchors shifted over the feature map, decoded, clipped,
filtered by size, sorted by objectness, then NMS. float32 in ncnn's operation order."""

from __future__ import annotations

import numpy as np

from .detection import descending_order, expf, nms_sorted
from .roi import round_half_away

F32 = np.float32
RATIOS = (0.5, 1.0, 2.0)  # fixed in ncnn (not params)
SCALES = (8.0, 16.0, 32.0)


def generate_anchors(base_size: int) -> np.ndarray:
    """(len(RATIOS) * len(SCALES), 4) anchors x1, y1, x2, y2 centred on the base box."""
    c = F32(base_size) * F32(0.5)
    rows = []
    for ar in RATIOS:
        r_w = int(round_half_away(F32(base_size) / np.sqrt(F32(ar))))
        r_h = int(round_half_away(F32(r_w) * F32(ar)))
        for s in SCALES:
            half_w = F32(r_w) * F32(s) * F32(0.5)
            half_h = F32(r_h) * F32(s) * F32(0.5)
            rows.append([c - half_w, c - half_h, c + half_w, c + half_h])
    return np.asarray(rows, F32)


def proposals(scores: np.ndarray, deltas: np.ndarray, im_info: np.ndarray, anchors: np.ndarray,
              feat_stride: int, pre_nms_top_n: int, after_nms_top_n: int, nms_thresh: float,
              min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """scores (2A, h, w) (objectness in the second half), deltas (4A, h, w), im_info
    [im_h, im_w, scale] -> boxes (n, 4), scores (n,)."""
    a = anchors.shape[0]
    _, h, w = scores.shape
    aw = anchors[:, 2] - anchors[:, 0]
    ah = anchors[:, 3] - anchors[:, 1]
    ax = anchors[:, 0][:, None, None] + (np.arange(w, dtype=F32) * F32(feat_stride))[None, None, :]
    ay = anchors[:, 1][:, None, None] + (np.arange(h, dtype=F32) * F32(feat_stride))[None, :, None]
    d = deltas[:4 * a].reshape(a, 4, h, w)
    awb, ahb = aw[:, None, None], ah[:, None, None]
    cx = ax + awb * F32(0.5)
    cy = ay + ahb * F32(0.5)
    pcx = cx + awb * d[:, 0]
    pcy = cy + ahb * d[:, 1]
    pw = awb * expf(d[:, 2])
    ph = ahb * expf(d[:, 3])
    im_h, im_w, im_scale = F32(im_info[0]), F32(im_info[1]), F32(im_info[2])
    boxes = np.stack([np.clip(pcx - pw * F32(0.5), None, im_w - F32(1)),
                      np.clip(pcy - ph * F32(0.5), None, im_h - F32(1)),
                      np.clip(pcx + pw * F32(0.5), None, im_w - F32(1)),
                      np.clip(pcy + ph * F32(0.5), None, im_h - F32(1))], axis=-1)
    boxes = np.maximum(boxes, F32(0)).reshape(-1, 4)  # anchor-major, then row, then column
    objectness = scores[a:2 * a].reshape(-1)
    min_box = F32(min_size) * im_scale
    keep = ((boxes[:, 2] - boxes[:, 0] + F32(1)) >= min_box) & ((boxes[:, 3] - boxes[:, 1] + F32(1)) >= min_box)
    boxes, objectness = boxes[keep], objectness[keep]
    order = descending_order(objectness)
    if 0 < pre_nms_top_n < order.size:
        order = order[:pre_nms_top_n]
    boxes, objectness = boxes[order], objectness[order]
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    picked = nms_sorted(boxes, areas, nms_thresh)[:max(after_nms_top_n, 0)]
    return boxes[picked], objectness[picked]
