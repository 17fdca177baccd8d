"""SqueezeNet v1.1 ImageNet classifier, 227 x 227: the 1000 class probabilities."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ._base import ZooModel, image_input

__all__ = ["SqueezeNet"]


class SqueezeNet(ZooModel):
    def __init__(self, target_size: int = 227, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.mean_vals = [104.0, 117.0, 123.0]
        self.norm_vals: list[float] = []
        super().__init__("squeezenet_v1.1.param", "squeezenet_v1.1.bin", num_threads, use_gpu, model_dir)

    def __call__(self, img):
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR, self.target_size, self.target_size,
                             self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("data", mat_in)
            _, mat_out = ex.extract("prob")
        return np.array(mat_out)
