"""SimplePose (ResNet-18 heatmaps), 192 x 256 RGB input: 17 COCO keypoints per image."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ..utils.objects import KeyPoint
from ._base import ZooModel, image_input

__all__ = ["SimplePose"]


class SimplePose(ZooModel):
    def __init__(self, target_width: int = 192, target_height: int = 256, num_threads: int = 1,
                 use_gpu: bool = False, *, model_dir: str | os.PathLike | None = None) -> None:
        self.target_width = target_width
        self.target_height = target_height
        self.mean_vals = [0.485 * 255.0, 0.456 * 255.0, 0.406 * 255.0]
        self.norm_vals = [1 / 0.229 / 255.0, 1 / 0.224 / 255.0, 1 / 0.225 / 255.0]
        super().__init__("pose.param", "pose.bin", num_threads, use_gpu, model_dir)

    def __call__(self, img):
        h, w = img.shape[0], img.shape[1]
        mat_in = image_input(img, Mat.PixelType.PIXEL_BGR2RGB, self.target_width, self.target_height,
                             self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("data", mat_in)
            _, mat_out = ex.extract("conv3_fwd")
        heatmaps = np.asarray(mat_out).reshape(mat_out.c, mat_out.h, mat_out.w)
        keypoints = []
        for heatmap in heatmaps:
            # the first highest value above 0, or the origin with prob 0 when none is positive
            index = int(np.argmax(heatmap))
            y, x = divmod(index, mat_out.w)
            prob = heatmap.flat[index]
            if not prob > 0.0:
                x, y, prob = 0, 0, 0.0
            keypoint = KeyPoint()
            keypoint.p.x = x * w / float(mat_out.w)
            keypoint.p.y = y * h / float(mat_out.h)
            keypoint.prob = prob
            keypoints.append(keypoint)
        return keypoints
