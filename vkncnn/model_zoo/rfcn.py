"""R-FCN (ResNet-50) on VOC, shorter side 224."""

from __future__ import annotations

import os

from ..mat import Mat
from ._base import image_input
from ._two_stage import TwoStageModel
from .class_names import VOC_CLASSES

__all__ = ["RFCN"]


class RFCN(TwoStageModel):
    shared_blobs = ("rfcn_cls", "rfcn_bbox")

    def __init__(self, target_size: int = 224, max_per_image: int = 100, confidence_thresh: float = 0.6,
                 nms_threshold: float = 0.3, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.max_per_image = max_per_image
        self.confidence_thresh = confidence_thresh
        self.nms_threshold = nms_threshold
        self.mean_vals = [102.9801, 115.9465, 122.7717]
        self.norm_vals: list[float] = []
        super().__init__("rfcn_end2end.param", "rfcn_end2end.bin", num_threads, use_gpu, model_dir)
        self.class_names = list(VOC_CLASSES)

    def _delta_offset(self, label):
        return 4  # class-agnostic box regression: the foreground deltas

    def __call__(self, img):
        scale, w, h = self._scale_and_input(img, self.target_size)
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR, int(w), int(h), self.mean_vals, self.norm_vals)
        return self._detect(img, mat_in, w, h, scale)
