"""YOLACT (ResNet-50) instance segmentation on COCO, 550 x 550: boxes, masks, classes, scores."""

from __future__ import annotations

import os
from math import sqrt

import numpy as np

from ..mat import Mat
from ..mat_ops import resize_bilinear
from ..utils.functional import nms, sigmoid
from ._base import ZooModel, image_input
from .class_names import COCO_CLASSES

__all__ = ["Yolact"]


class Yolact(ZooModel):
    def __init__(self, target_size: int = 550, confidence_threshold: float = 0.05, nms_threshold: float = 0.5,
                 keep_top_k: int = 200, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.confidence_threshold = confidence_threshold
        self.nms_threshold = nms_threshold
        self.keep_top_k = keep_top_k
        self.mean_vals = [123.68, 116.78, 103.94]
        self.norm_vals = [1.0 / 58.40, 1.0 / 57.12, 1.0 / 57.38]
        super().__init__("yolact.param", "yolact.bin", num_threads, use_gpu, model_dir)
        self.conv_ws = [69, 35, 18, 9, 5]
        self.conv_hs = [69, 35, 18, 9, 5]
        self.aspect_ratios = [1, 0.5, 2]
        self.scales = [24, 48, 96, 192, 384]
        self.priors: np.ndarray | None = None
        self.last_img_size: tuple[int, int] | None = None
        self.make_priors()
        self.class_names = ["background"] + list(COCO_CLASSES)

    def __call__(self, img):
        img_h, img_w = img.shape[0], img.shape[1]
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR2RGB, self.target_size, self.target_size,
                             self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("input.1", mat_in)
            # prototypes 138 x 138 x 32, boxes 4 x 19248, mask coefficients 32 x 19248, scores 81 x 19248
            proto, loc, coeffs, conf = (np.array(ex.extract(name)[1]) for name in ("619", "816", "818", "820"))
        boxes, masks, classes, scores = self.detect(conf, loc, self.make_priors(), coeffs, img_w, img_h)
        masks = sigmoid(proto.transpose(1, 2, 0) @ masks.T)  # h x w x detections
        # each detection's mask resized to the image (bilinear, half-pixel centres)
        resized = resize_bilinear(Mat(np.ascontiguousarray(masks.transpose(2, 0, 1), np.float32)), img_w, img_h)
        return boxes, np.asarray(resized) > 0.5, classes, scores

    def make_priors(self) -> np.ndarray:
        """Priors (centre x, centre y, w, h), relative to the input; square, as trained."""
        if self.priors is None or self.last_img_size != (self.target_size, self.target_size):
            priors = []
            for conv_w, conv_h, scale in zip(self.conv_ws, self.conv_hs, self.scales):
                for i in range(conv_h):
                    for j in range(conv_w):
                        cx, cy = (j + 0.5) / conv_w, (i + 0.5) / conv_h
                        for ar in self.aspect_ratios:
                            w = scale * sqrt(ar) / self.target_size
                            priors += [cx, cy, w, w]
            self.priors = np.array(priors).reshape(-1, 4)
            self.last_img_size = (self.target_size, self.target_size)
        return self.priors

    def decode(self, loc: np.ndarray, priors: np.ndarray, img_w: int, img_h: int) -> np.ndarray:
        """Box offsets against the priors (variances 0.1, 0.2) -> (x, y, w + 1, h + 1) in pixels."""
        centre = priors[:, :2] + loc[:, :2] * 0.1 * priors[:, 2:]
        size = priors[:, 2:] * np.exp(loc[:, 2:] * 0.2)
        boxes = np.concatenate((centre - size / 2, size), 1)
        boxes[:, 0] *= img_w
        boxes[:, 1] *= img_h
        boxes[:, 2] = boxes[:, 2] * img_w + 1
        boxes[:, 3] = boxes[:, 3] * img_h + 1
        return boxes

    def detect(self, conf_preds: np.ndarray, loc_data: np.ndarray, prior_data: np.ndarray, mask_data: np.ndarray,
               img_w: int, img_h: int) -> tuple[np.ndarray, ...]:
        """NMS per class over each prior's best non-background class."""
        scores_fg = conf_preds[:, 1:]
        classes = np.argmax(scores_fg, axis=1)
        conf = scores_fg[np.arange(scores_fg.shape[0]), classes]
        keep = conf > self.confidence_threshold
        conf, classes, masks = conf[keep], classes[keep], mask_data[keep, :]
        boxes = self.decode(loc_data[keep, :], prior_data[keep, :], img_w, img_h)
        result = []
        for c in range(scores_fg.shape[1]):
            members = np.nonzero(classes == c)[0]
            for index in nms(boxes[members], conf[members], iou_threshold=self.nms_threshold, top_k=self.keep_top_k):
                m = members[index]
                result.append((boxes[m], masks[m], classes[m] + 1, conf[m]))
        if len(result) > self.keep_top_k:
            # the best keep_top_k over all classes
            order = np.argsort([-r[3] for r in result], kind="stable")[: self.keep_top_k]
            result = [result[i] for i in order]
        return tuple(np.array([r[k] for r in result]) for k in range(4))
