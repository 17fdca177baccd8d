"""The SSD-style detectors: one resized input blob, one DetectionOutput blob."""

from __future__ import annotations

import os

from ..mat import Mat
from ._base import ZooModel, detection_rows, image_input


class SSDModel(ZooModel):
    """Subclasses set the files, input/output blob names, pixel order, mean/norm and classes."""

    input_name = "data"
    output_name = "detection_out"
    pixel_type = Mat.PixelType.PIXEL_BGR

    def __init__(self, param: str, weights: str, target_size: int, num_threads: int = 1, use_gpu: bool = False,
                 model_dir: str | os.PathLike | None = None) -> None:
        super().__init__(param, weights, num_threads, use_gpu, model_dir)
        self.target_size = target_size

    def _prepare(self, img):
        return image_input(img, self.pixel_type, self.target_size, self.target_size, self.mean_vals, self.norm_vals)

    def _detect(self, img):
        with self.net.create_extractor() as ex:
            ex.input(self.input_name, self._prepare(img))
            _, mat_out = ex.extract(self.output_name)
        return mat_out

    def __call__(self, img):
        mat_out = self._detect(img)
        return detection_rows(mat_out, img.shape[1], img.shape[0])
