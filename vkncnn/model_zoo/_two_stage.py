"""What Faster R-CNN and R-FCN share: a first pass for the proposals, a second pass per
proposal for its class scores and box refinement, then per-class NMS."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..mat import Mat
from ..utils.objects import Detect_Object
from ._base import ZooModel, nms_sorted_objects


class TwoStageModel(ZooModel):
    shared_blobs: tuple[str, ...] = ()  # the first pass's feature blobs the second pass reads

    def _scale_and_input(self, img, short_side):
        h, w = img.shape[0], img.shape[1]
        if w < h:
            scale = float(short_side) / w
            w, h = short_side, h * scale
        else:
            scale = float(short_side) / h
            w, h = w * scale, short_side
        return scale, w, h

    def _detect(self, img, mat_in, w, h, scale):
        im_info = Mat(np.array([h, w, scale], np.float32))
        with self.net.create_extractor() as ex:
            ex.input("data", mat_in)
            ex.input("im_info", im_info)
            shared = {name: ex.extract(name)[1] for name in self.shared_blobs}
            rois = ex.extract("rois")[1]
        candidates = []
        for i in range(rois.c):
            roi = rois.channel(i)
            with self.net.create_extractor() as ex:
                for name, blob in shared.items():
                    ex.input(name, blob)
                ex.input("rois", roi)
                bbox_pred = np.asarray(ex.extract("bbox_pred")[1]).reshape(-1)
                cls_prob = np.asarray(ex.extract("cls_prob")[1]).reshape(-1)
            while len(candidates) < cls_prob.size:
                candidates.append([])
            # the first best class above 0; background (0) and weak ones are dropped
            label, score = 0, 0.0
            for j, s in enumerate(cls_prob):
                if s > score:
                    label, score = j, s
            if label == 0 or score <= self.confidence_thresh:
                continue
            deltas = bbox_pred[self._delta_offset(label):][:4]
            candidates[label].append(self._refine(img, np.asarray(roi).reshape(-1), scale, deltas, label, score))
        objects = []
        for group in candidates:
            group.sort(key=lambda obj: obj.prob, reverse=True)
            objects += [group[k] for k in nms_sorted_objects(group, self.nms_threshold)]
        objects.sort(key=lambda obj: obj.prob, reverse=True)
        return objects[: self.max_per_image]

    @staticmethod
    def _refine(img, roi, scale, deltas, label, score):
        x1, y1, x2, y2 = roi[0] / scale, roi[1] / scale, roi[2] / scale, roi[3] / scale
        pb_w, pb_h = x2 - x1 + 1, y2 - y1 + 1
        dx, dy, dw, dh = deltas
        cx, cy = x1 + pb_w * 0.5 + pb_w * dx, y1 + pb_h * 0.5 + pb_h * dy
        w, h = pb_w * np.exp(dw), pb_h * np.exp(dh)
        max_x, max_y = float(img.shape[1] - 1), float(img.shape[0] - 1)
        ox1 = np.maximum(np.minimum(cx - w * 0.5, max_x), 0.0)
        oy1 = np.maximum(np.minimum(cy - h * 0.5, max_y), 0.0)
        ox2 = np.maximum(np.minimum(cx + w * 0.5, max_x), 0.0)
        oy2 = np.maximum(np.minimum(cy + h * 0.5, max_y), 0.0)
        return Detect_Object(label, score, ox1, oy1, ox2 - ox1 + 1, oy2 - oy1 + 1)

    def nms_sorted_bboxes(self, objects: Sequence[Detect_Object], nms_threshold: float) -> list[int]:
        return nms_sorted_objects(objects, nms_threshold)
