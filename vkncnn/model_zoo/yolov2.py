"""MobileNet-YOLOv2 on VOC, 416 x 416 (YoloDetectionOutput in the net)."""

from __future__ import annotations

import os

from ..mat import Mat
from ._ssd import SSDModel
from .class_names import VOC_CLASSES

__all__ = ["MobileNet_YoloV2"]


class MobileNet_YoloV2(SSDModel):  # noqa: N801  (ncnn's name)
    def __init__(self, target_size: int = 416, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals = [1.0, 1.0, 1.0]
        self.norm_vals = [0.007843, 0.007843, 0.007843]
        self.class_names = list(VOC_CLASSES)
        super().__init__("mobilenet_yolo.param", "mobilenet_yolo.bin", target_size, num_threads, use_gpu, model_dir)

    def _prepare(self, img):
        # x * norm - 1: the input in [-1, 1]
        mat = Mat.from_pixels_resize(img, self.pixel_type, img.shape[1], img.shape[0],
                                     self.target_size, self.target_size)
        mat.substract_mean_normalize([], self.norm_vals)
        mat.substract_mean_normalize(self.mean_vals, [])
        return mat
