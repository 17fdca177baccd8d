"""YOLOv7-tiny on COCO, 416 x 416: anchor decoding per stride, then per-class suppression."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..mat import Mat
from ..utils.functional import sigmoid
from ..utils.objects import Detect_Object
from ._base import ZooModel, image_input
from .class_names import COCO_DARKNET_CLASSES

__all__ = ["YoloV7_Base", "YoloV7_Tiny"]

_ANCHORS = [[12, 16, 19, 36, 40, 28], [36, 75, 76, 55, 72, 146], [142, 110, 192, 243, 459, 401]]
_STRIDES = [8, 16, 32]
_OUTPUTS = ["output", "288", "302"]
_LOGIT_FLOOR = -1.098612  # logit of 0.25: rows below it cannot pass the 0.25 confidence


def _overlap(a0, a1, b0, b1):
    """Length shared by the spans [a0, a1] and [b0, b1]."""
    return max(0.0, min(a1, b1) - max(a0, b0))


def _iou(a, b):
    r1, r2 = a.rect, b.rect
    inter = _overlap(r1.x, r1.x + r1.w, r2.x, r2.x + r2.w) * _overlap(r1.y, r1.y + r1.h, r2.y, r2.y + r2.h)
    union = r1.w * r1.h + r2.w * r2.h - inter
    return 0 if union == 0 else inter / union


def _suppress(detections, iou_thresh=0.45):
    """Per label, in order of first appearance, keep a detection unless a later one of
    its label overlaps it by more than iou_thresh (the list comes sorted by rising prob)."""
    by_label = {}
    for det in detections:
        by_label.setdefault(det.label, []).append(det)
    kept = []
    for dets in by_label.values():
        for i, det in enumerate(dets):
            if not any(_iou(det, later) > iou_thresh for later in dets[i + 1:]):
                kept.append(det)
    return kept


class YoloV7_Base(ZooModel):  # noqa: N801  (ncnn's name)
    def __init__(self, target_size: int, num_threads: int = 1, use_gpu: bool = False,
                 use_strides: Iterable[int] = (8, 16, 32), *, model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.use_strides = list(use_strides)
        self.mean_vals: list[float] = []
        self.norm_vals = [1 / 255.0, 1 / 255.0, 1 / 255.0]
        super().__init__("yolov7-tiny.param", "yolov7-tiny.bin", num_threads, use_gpu, model_dir)
        self.class_names = list(COCO_DARKNET_CLASSES)

    def _candidates(self, rows, stride, anchor_w, anchor_h):
        side = int(np.sqrt(rows.shape[0]))
        rows = rows[: side * side]
        cls = rows[:, 5:]
        passing = ~((rows[:, 4] < _LOGIT_FLOOR) | (cls.max(axis=1) < _LOGIT_FLOOR))
        label = np.argmax(cls, axis=1)
        conf = sigmoid(rows[:, 4]) * sigmoid(cls[np.arange(rows.shape[0]), label])
        objects = []
        for index in np.nonzero(passing & (conf > 0.25))[0]:
            i, j = divmod(int(index), side)
            x, y, w, h = rows[index, 0:4]
            obj = Detect_Object()
            obj.label = self.class_names[label[index]]
            obj.prob = conf[index]
            obj.rect.w = ((sigmoid(w) * 2) ** 2) * anchor_w
            obj.rect.h = ((sigmoid(h) * 2) ** 2) * anchor_h
            obj.rect.x = ((sigmoid(x) * 2) - 0.5 + j) * stride - (obj.rect.w / 2)
            obj.rect.y = ((sigmoid(y) * 2) - 0.5 + i) * stride - (obj.rect.h / 2)
            objects.append(obj)
        return objects

    def __call__(self, img):
        img_h, img_w = img.shape[0], img.shape[1]
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR2RGB, self.target_size, self.target_size,
                             self.mean_vals, self.norm_vals)
        objects = []
        with self.net.create_extractor() as ex:
            ex.input("images", mat_in)
            for k, stride in enumerate(_STRIDES):
                if stride not in self.use_strides:
                    continue
                out = np.asarray(ex.extract(_OUTPUTS[k])[1])
                for c in range(3):
                    rows = out[c].reshape(-1, out.shape[-1])
                    objects += self._candidates(rows, stride, _ANCHORS[k][c * 2], _ANCHORS[k][c * 2 + 1])
        objects.sort(key=lambda o: o.prob)
        kept = _suppress(objects)
        sx, sy = img_w / self.target_size, img_h / self.target_size
        for obj in kept:
            obj.rect.x *= sx
            obj.rect.w *= sx
            obj.rect.y *= sy
            obj.rect.h *= sy
        return kept


class YoloV7_Tiny(YoloV7_Base):  # noqa: N801  (ncnn's name)
    def __init__(self, **kwargs: Any) -> None:
        """YoloV7_Base's num_threads, use_gpu, use_strides, model_dir (by name); 416 x 416."""
        super().__init__(416, **kwargs)
