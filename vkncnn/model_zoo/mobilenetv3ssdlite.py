"""MobileNetV3-SSDLite on VOC, 300 x 300, RGB input; boxes clamped to the input frame."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ..utils.objects import Detect_Object
from ._ssd import SSDModel
from .class_names import VOC_CLASSES

__all__ = ["MobileNetV3_SSDLite"]


class MobileNetV3_SSDLite(SSDModel):  # noqa: N801  (ncnn's name)
    input_name = "input"
    pixel_type = Mat.PixelType.PIXEL_BGR2RGB

    def __init__(self, target_size: int = 300, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals = [123.675, 116.28, 103.53]
        self.norm_vals = [1.0, 1.0, 1.0]
        self.class_names = list(VOC_CLASSES)
        super().__init__("mobilenetv3_ssdlite_voc.param", "mobilenetv3_ssdlite_voc.bin", target_size,
                         num_threads, use_gpu, model_dir)

    def _prepare(self, img):
        # normalise, then subtract the mean (the model was trained on (x * norm) - mean)
        mat = Mat.from_pixels_resize(img, self.pixel_type, img.shape[1], img.shape[0],
                                     self.target_size, self.target_size)
        mat.substract_mean_normalize([], self.norm_vals)
        mat.substract_mean_normalize(self.mean_vals, [])
        return mat

    def __call__(self, img):
        mat_out = self._detect(img)
        img_h, img_w = img.shape[0], img.shape[1]
        size = self.target_size
        objects = []
        for i in range(mat_out.h if mat_out.dims else 0):
            values = mat_out.row(i)
            # corners clamped to the last input pixel, then scaled to the image
            x1, y1, x2, y2 = (min(max(v * size, 0.0), float(size - 1)) / size for v in values[2:6])
            x1, x2, y1, y2 = x1 * img_w, x2 * img_w, y1 * img_h, y2 * img_h
            if np.isnan(x1) or np.isnan(y1) or np.isnan(x2) or np.isnan(y2):
                continue
            objects.append(Detect_Object(values[0], values[1], x1, y1, x2 - x1, y2 - y1))
        return objects
