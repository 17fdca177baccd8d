"""PeleeNet-SSD on BDD100K driving scenes, 304 x 304: detections plus a segmentation map."""

from __future__ import annotations

import os

from ..mat import Mat
from ..mat_ops import resize_bilinear
from ._base import detection_rows
from ._ssd import SSDModel
from .class_names import PELEE_CLASSES

__all__ = ["PeleeNet_SSD"]


class PeleeNet_SSD(SSDModel):  # noqa: N801  (ncnn's name)
    def __init__(self, target_size: int = 304, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals = [103.9, 116.7, 123.6]
        self.norm_vals = [0.017, 0.017, 0.017]
        self.class_names = list(PELEE_CLASSES)
        super().__init__("pelee.param", "pelee.bin", target_size, num_threads, use_gpu, model_dir)

    def __call__(self, img):
        """(objects, segmentation Mat resized to the image)."""
        img_h, img_w = img.shape[0], img.shape[1]
        with self.net.create_extractor() as ex:
            ex.input(self.input_name, self._prepare(img))
            _, mat_out = ex.extract(self.output_name)
            _, seg_out = ex.extract("sigmoid")
        resized = Mat()
        resize_bilinear(seg_out, resized, img_w, img_h)
        return detection_rows(mat_out, img_w, img_h), resized
