"""SqueezeNet-SSD on VOC, 300 x 300."""

from __future__ import annotations

import os

from ._ssd import SSDModel
from .class_names import VOC_CLASSES

__all__ = ["SqueezeNet_SSD"]


class SqueezeNet_SSD(SSDModel):  # noqa: N801  (ncnn's name)
    def __init__(self, target_size: int = 300, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals = [104.0, 117.0, 123.0]
        self.norm_vals: list[float] = []
        self.class_names = list(VOC_CLASSES)
        super().__init__("squeezenet_ssd_voc.param", "squeezenet_ssd_voc.bin", target_size,
                         num_threads, use_gpu, model_dir)
