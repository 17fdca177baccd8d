"""Faster R-CNN (ZF) on VOC, shorter side 600."""

from __future__ import annotations

import os

from ..mat import Mat
from ._base import image_input
from ._two_stage import TwoStageModel
from .class_names import VOC_CLASSES

__all__ = ["Faster_RCNN"]


class Faster_RCNN(TwoStageModel):  # noqa: N801  (ncnn's name)
    shared_blobs = ("conv5_relu5",)

    def __init__(self, img_width: int = 600, img_height: int = 600, num_threads: int = 1, use_gpu: bool = False,
                 max_per_image: int = 100, confidence_thresh: float = 0.05, nms_threshold: float = 0.3, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.img_width = img_width
        self.img_height = img_height
        self.mean_vals = [102.9801, 115.9465, 122.7717]
        self.norm_vals: list[float] = []
        super().__init__("ZF_faster_rcnn_final.param", "ZF_faster_rcnn_final.bin", num_threads, use_gpu, model_dir)
        self.max_per_image = max_per_image
        self.confidence_thresh = confidence_thresh
        self.nms_threshold = nms_threshold
        self.class_names = list(VOC_CLASSES)

    def _delta_offset(self, label):
        return label * 4  # class-specific box regression

    def __call__(self, img):
        h, w = img.shape[0], img.shape[1]
        # the shorter side becomes img_width (portrait) or img_height (landscape)
        scale, w, h = self._scale_and_input(img, self.img_width if w < h else self.img_height)
        w, h = int(w), int(h)
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR, w, h, self.mean_vals, self.norm_vals)
        return self._detect(img, mat_in, w, h, scale)
