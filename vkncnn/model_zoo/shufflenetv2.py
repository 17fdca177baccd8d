"""ShuffleNetV2 x0.5 ImageNet classifier, 224 x 224: softmax over the fc output."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ._base import ZooModel, image_input

__all__ = ["ShuffleNetV2"]


class ShuffleNetV2(ZooModel):
    def __init__(self, target_size: int = 224, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.mean_vals: list[float] = []
        self.norm_vals = [1 / 255.0, 1 / 255.0, 1 / 255.0]
        super().__init__("shufflenet_v2_x0.5.param", "shufflenet_v2_x0.5.bin", num_threads, use_gpu, model_dir)

    def __call__(self, img):
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR, self.target_size, self.target_size,
                             self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("data", mat_in)
            _, mat_out = ex.extract("fc")
        logits = np.asarray(mat_out, np.float32).reshape(-1)
        e = np.exp(logits - logits.max())  # the model has no softmax layer: ncnn's Softmax over w
        return (e / e.sum()).astype(np.float32)
