"""MobileNetV2-YOLOv3 on VOC, 352 x 352 (Yolov3DetectionOutput in the net)."""

from __future__ import annotations

import os

from ._ssd import SSDModel
from .class_names import VOC_CLASSES

__all__ = ["MobileNetV2_YoloV3"]


class MobileNetV2_YoloV3(SSDModel):  # noqa: N801  (ncnn's name)
    def __init__(self, target_size: int = 352, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals = [127.5, 127.5, 127.5]
        self.norm_vals = [0.007843, 0.007843, 0.007843]
        self.class_names = list(VOC_CLASSES)
        super().__init__("mobilenetv2_yolov3.param", "mobilenetv2_yolov3.bin", target_size,
                         num_threads, use_gpu, model_dir)
