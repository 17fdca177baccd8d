"""numpy helpers the detectors' post-processing shares: box forms, activations, NMS.

Inputs are never modified (ncnn's softmax works in place on its argument; this one
returns a new array with the same values).
"""

from __future__ import annotations

from typing import overload

import numpy as np

__all__ = ["area_of", "iou_of", "make_grid", "nms", "sigmoid", "softmax", "xywh2xyxy", "xyxy2xywh"]


def xywh2xyxy(x: np.ndarray) -> np.ndarray:
    """n x 4 boxes (centre x, centre y, w, h) -> (x1, y1, x2, y2)."""
    y = np.zeros_like(x)
    half = x[:, 2:4] / 2
    y[:, 0:2] = x[:, 0:2] - half
    y[:, 2:4] = x[:, 0:2] + half
    return y


def xyxy2xywh(x: np.ndarray) -> np.ndarray:
    """n x 4 boxes (x1, y1, x2, y2) -> (centre x, centre y, w, h)."""
    y = np.zeros_like(x)
    y[:, 0:2] = (x[:, 0:2] + x[:, 2:4]) / 2
    y[:, 2:4] = x[:, 2:4] - x[:, 0:2]
    return y


def make_grid(nx: int = 20, ny: int = 20) -> np.ndarray:
    """Cell coordinates (x, y) of an nx x ny grid, shaped (1, ny, nx, 2), float32."""
    xs, ys = np.meshgrid(np.arange(nx), np.arange(ny))
    return np.stack((xs, ys), 2).reshape((1, ny, nx, 2)).astype(np.float32)


@overload
def sigmoid(x: np.ndarray) -> np.ndarray:
    ...


@overload
def sigmoid(x: float | np.floating) -> np.floating:
    ...


def sigmoid(x: np.ndarray | float | np.floating) -> np.ndarray | np.floating:
    return 1 / (1 + np.exp(-x))


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of a 2-D array."""
    shifted = x - np.max(x, axis=-1).reshape((x.shape[0], 1))
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1).reshape((x.shape[0], 1))


def area_of(left_top: np.ndarray, right_bottom: np.ndarray) -> np.ndarray:
    """Areas of boxes given by corners (..., 2); empty boxes have area 0."""
    size = np.clip(right_bottom - left_top, 0.0, None)
    return size[..., 0] * size[..., 1]


def iou_of(boxes0: np.ndarray, boxes1: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Intersection over union of corner-form boxes (N, 4) against (N or 1, 4)."""
    inner_lt = np.maximum(boxes0[..., :2], boxes1[..., :2])
    inner_rb = np.minimum(boxes0[..., 2:], boxes1[..., 2:])
    inter = area_of(inner_lt, inner_rb)
    union = area_of(boxes0[..., :2], boxes0[..., 2:]) + area_of(boxes1[..., :2], boxes1[..., 2:]) - inter
    return inter / (union + eps)


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float, top_k: int = -1,
        candidate_size: int = 200) -> list[int]:
    """Greedy NMS over corner-form boxes: indexes kept, best score first.

    Only the `candidate_size` best scores take part; top_k > 0 stops after that many."""
    order = np.argsort(scores)[-candidate_size:]
    picked = []
    while len(order) > 0:
        best = order[-1]
        picked.append(best)
        if 0 < top_k == len(picked) or len(order) == 1:
            break
        order = order[:-1]
        overlap = iou_of(boxes[order, :], np.expand_dims(boxes[best, :], axis=0))
        order = order[overlap <= iou_threshold]
    return picked
