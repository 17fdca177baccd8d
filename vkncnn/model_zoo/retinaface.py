"""RetinaFace (MobileNet 0.25) face detector on the image at its own size: boxes and
five landmarks per face."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..mat import Mat
from ..utils.objects import Face_Object, Point
from ._base import ZooModel, nms_sorted_objects

__all__ = ["RetinaFace"]

# stride: the two anchor scales of its level (one ratio, 1.0; base size 16)
_LEVELS = [(32, (32.0, 16.0)), (16, (8.0, 4.0)), (8, (2.0, 1.0))]


class RetinaFace(ZooModel):
    def __init__(self, prob_threshold: float = 0.8, nms_threshold: float = 0.4, num_threads: int = 1,
                 use_gpu: bool = False, *, model_dir: str | os.PathLike | None = None) -> None:
        self.prob_threshold = prob_threshold
        self.nms_threshold = nms_threshold
        super().__init__("mnet.25-opt.param", "mnet.25-opt.bin", num_threads, use_gpu, model_dir)

    def __call__(self, img):
        img_h, img_w = img.shape[0], img.shape[1]
        mat_in = Mat.from_pixels(img, Mat.PixelType.PIXEL_BGR2RGB, img_w, img_h)
        proposals = []
        with self.net.create_extractor() as ex:
            ex.input("data", mat_in)
            for stride, scales in _LEVELS:
                blobs = [np.asarray(ex.extract(f"face_rpn_{kind}_stride{stride}")[1])
                         for kind in ("cls_prob_reshape", "bbox_pred", "landmark_pred")]
                proposals += self.generate_proposals(self.generate_anchors(16, [1.0], scales), stride, *blobs,
                                                     self.prob_threshold)
        proposals.sort(key=lambda obj: obj.prob, reverse=True)
        faces = [proposals[i] for i in nms_sorted_objects(proposals, self.nms_threshold)]
        for face in faces:
            r = face.rect
            x0, y0 = min(max(r.x, 0.0), img_w - 1.0), min(max(r.y, 0.0), img_h - 1.0)
            x1, y1 = min(max(r.x + r.w, 0.0), img_w - 1.0), min(max(r.y + r.h, 0.0), img_h - 1.0)
            r.x, r.y, r.w, r.h = x0, y0, x1 - x0, y1 - y0
        return faces

    @staticmethod
    def generate_anchors(base_size: float, ratios: Sequence[float], scales: Sequence[float]) -> np.ndarray:
        """Anchors (x1, y1, x2, y2) centred on the base cell, one per ratio and scale."""
        anchors = np.zeros((len(ratios) * len(scales), 4), np.float32)
        centre = base_size * 0.5
        for i, ar in enumerate(ratios):
            r_w = np.round(base_size / np.sqrt(ar))
            r_h = np.round(r_w * ar)
            for j, scale in enumerate(scales):
                half_w, half_h = r_w * scale * 0.5, r_h * scale * 0.5
                anchors[i * len(scales) + j] = (centre - half_w, centre - half_h, centre + half_w, centre + half_h)
        return anchors

    @staticmethod
    def generate_proposals(anchors: np.ndarray, feat_stride: int, score_blob: np.ndarray, bbox_blob: np.ndarray,
                           landmark_blob: np.ndarray, prob_threshold: float) -> list[Face_Object]:
        """Faces whose score reaches prob_threshold, anchor by anchor, row by row."""
        faces = []
        w = score_blob.shape[-1]
        for q, anchor in enumerate(anchors):
            anchor_w, anchor_h = anchor[2] - anchor[0], anchor[3] - anchor[1]
            score = score_blob[q + len(anchors)].reshape(-1)
            bbox = bbox_blob[q * 4:q * 4 + 4].reshape(4, -1)
            landmark = landmark_blob[q * 10:q * 10 + 10].reshape(10, -1)
            for index in np.nonzero(score >= prob_threshold)[0]:
                i, j = divmod(int(index), w)
                cx = anchor[0] + j * feat_stride + anchor_w * 0.5
                cy = anchor[1] + i * feat_stride + anchor_h * 0.5
                dx, dy, dw, dh = bbox[:, index]
                pb_cx, pb_cy = cx + anchor_w * dx, cy + anchor_h * dy
                pb_w, pb_h = anchor_w * np.exp(dw), anchor_h * np.exp(dh)
                face = Face_Object()
                face.rect.x, face.rect.y = pb_cx - pb_w * 0.5, pb_cy - pb_h * 0.5
                face.rect.w = (pb_cx + pb_w * 0.5) - face.rect.x + 1
                face.rect.h = (pb_cy + pb_h * 0.5) - face.rect.y + 1
                face.landmark = []
                for k in range(5):
                    point = Point()
                    point.x = cx + (anchor_w + 1) * landmark[2 * k, index]
                    point.y = cy + (anchor_h + 1) * landmark[2 * k + 1, index]
                    face.landmark.append(point)
                face.prob = score[index]
                faces.append(face)
        return faces
