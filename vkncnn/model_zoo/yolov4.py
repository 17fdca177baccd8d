"""YOLOv4 and YOLOv4-tiny on COCO (Yolov3DetectionOutput in the net, output blob "output")."""

from __future__ import annotations

import os
from typing import Any

from ..mat import Mat
from ._ssd import SSDModel
from .class_names import COCO_DARKNET_CLASSES

__all__ = ["YoloV4", "YoloV4_Base", "YoloV4_Tiny"]


class YoloV4_Base(SSDModel):  # noqa: N801  (ncnn's name)
    output_name = "output"
    pixel_type = Mat.PixelType.PIXEL_BGR2RGB

    def __init__(self, tiny: bool, target_size: int, num_threads: int = 1, use_gpu: bool = False, *,
                 model_dir: str | os.PathLike | None = None) -> None:
        self.mean_vals: list[float] = []
        self.norm_vals = [1 / 255.0, 1 / 255.0, 1 / 255.0]
        self.class_names = ["background"] + list(COCO_DARKNET_CLASSES)
        stem = "yolov4-tiny-opt" if tiny else "yolov4-opt"
        super().__init__(stem + ".param", stem + ".bin", target_size, num_threads, use_gpu, model_dir)


class YoloV4_Tiny(YoloV4_Base):  # noqa: N801  (ncnn's name)
    def __init__(self, **kwargs: Any) -> None:
        """YoloV4_Base's num_threads, use_gpu, model_dir (by name); 416 x 416."""
        super().__init__(True, 416, **kwargs)


class YoloV4(YoloV4_Base):
    def __init__(self, **kwargs: Any) -> None:
        """YoloV4_Base's num_threads, use_gpu, model_dir (by name); 608 x 608."""
        super().__init__(False, 608, **kwargs)
