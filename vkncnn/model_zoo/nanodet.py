"""NanoDet-m on COCO, letterboxed to 320: GFL distance decoding, per-class NMS."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ..utils.functional import nms, softmax
from ..utils.objects import Detect_Object
from ._base import ZooModel, letterbox_input
from .class_names import COCO_CLASSES

__all__ = ["NanoDet"]

_SCORE_BLOBS = ["792", "814", "836"]
_BOX_BLOBS = ["795", "817", "839"]


class NanoDet(ZooModel):
    def __init__(self, target_size: int = 320, prob_threshold: float = 0.4, nms_threshold: float = 0.3,
                 num_threads: int = 1, use_gpu: bool = False, *, model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.prob_threshold = prob_threshold
        self.nms_threshold = nms_threshold
        self.mean_vals = [103.53, 116.28, 123.675]
        self.norm_vals = [0.017429, 0.017507, 0.017125]
        super().__init__("nanodet_m.param", "nanodet_m.bin", num_threads, use_gpu, model_dir)
        self.reg_max = 7
        self.strides = [8, 16, 32]
        self.num_candidate = 1000
        self.top_k = -1
        self.class_names = list(COCO_CLASSES)

    def _decode(self, mat_in, stride, raw_box, score):
        """Boxes (x1, y1, x2, y2) and scores of this stride's num_candidate best cells."""
        if mat_in.w > mat_in.h:
            fm_w = mat_in.w // stride
            fm_h = score.shape[0] // fm_w
        else:
            fm_h = mat_in.h // stride
            fm_w = score.shape[0] // fm_h
        ww, hh = np.meshgrid(np.arange(fm_w), np.arange(fm_h))
        cy, cx = (hh.flatten() + 0.5) * stride, (ww.flatten() + 0.5) * stride
        centre = np.stack((cx, cy, cx, cy), axis=1)
        bins = softmax(raw_box.reshape((-1, self.reg_max + 1)))
        distance = np.sum(bins * np.arange(self.reg_max + 1)[None, :], axis=1).reshape((-1, 4)) * stride
        best = np.argsort(score.max(axis=1))[::-1][: self.num_candidate]
        return centre[best] + [-1, -1, 1, 1] * distance[best], score[best]

    def __call__(self, img):
        mat_in, scale, wpad, hpad = letterbox_input(img, Mat.PixelType.PIXEL_BGR, self.target_size, 0,
                                                    self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("input.1", mat_in)
            scores = [np.reshape(ex.extract(name)[1], (-1, 80)) for name in _SCORE_BLOBS]
            raw_boxes = [np.reshape(ex.extract(name)[1], (-1, 32)) for name in _BOX_BLOBS]
        decoded = [self._decode(mat_in, s, b, sc) for s, b, sc in zip(self.strides, raw_boxes, scores)]
        bboxes = np.concatenate([d[0] for d in decoded], axis=0)
        confidences = np.concatenate([d[1] for d in decoded], axis=0)
        picked_boxes, picked_probs, picked_labels = [], [], []
        for class_index in range(confidences.shape[1]):
            probs = confidences[:, class_index]
            mask = probs > self.prob_threshold
            if not mask.any():
                continue
            boxes, probs = bboxes[mask, :], probs[mask]
            picked = nms(boxes, probs, iou_threshold=self.nms_threshold, top_k=self.top_k)
            picked_boxes.append(boxes[picked])
            picked_probs.append(probs[picked])
            picked_labels += [class_index] * len(picked)
        if not picked_boxes:
            return []
        objects = []
        for label, prob, b in zip(picked_labels, np.concatenate(picked_probs), np.concatenate(picked_boxes)):
            # corners outside the padded input are cut at its edges
            x = (b[0] - wpad / 2) / scale if b[0] > 0 else 0
            y = (b[1] - hpad / 2) / scale if b[1] > 0 else 0
            w = (b[2] - b[0]) / scale if b[2] < mat_in.w else (mat_in.w - b[0]) / scale
            h = (b[3] - b[1]) / scale if b[3] < mat_in.h else (mat_in.h - b[1]) / scale
            objects.append(Detect_Object(label, prob, x, y, w, h))
        return objects
