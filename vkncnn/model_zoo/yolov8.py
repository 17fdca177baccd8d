"""YOLOv8s on COCO, letterboxed to 640: distribution-focal box decoding and class-aware NMS."""

from __future__ import annotations

import os

import numpy as np

from ..mat import Mat
from ..utils.functional import make_grid, sigmoid, softmax
from ._base import ZooModel, letterbox_input, letterbox_objects, yolo_nms
from .class_names import COCO_CLASSES

__all__ = ["YoloV8s"]


class YoloV8s(ZooModel):
    def __init__(self, target_size: int = 640, prob_threshold: float = 0.25, nms_threshold: float = 0.45,
                 num_threads: int = 1, use_gpu: bool = False, *, model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.prob_threshold = prob_threshold
        self.nms_threshold = nms_threshold
        self.reg_max = 16
        self.mean_vals: list[float] = []
        self.norm_vals = [1 / 255.0, 1 / 255.0, 1 / 255.0]
        super().__init__("yolov8s.param", "yolov8s.bin", num_threads, use_gpu, model_dir)
        self.grid = [make_grid(20, 20), make_grid(40, 40), make_grid(80, 80)]
        self.stride = np.array([32, 16, 8])
        self.class_names = list(COCO_CLASSES)

    def __call__(self, img):
        mat_in, scale, wpad, hpad = letterbox_input(img, Mat.PixelType.PIXEL_BGR2RGB, self.target_size, 114.0,
                                                    self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("in0", mat_in)
            outputs = [np.array(ex.extract(name)[1]) for name in ("out2", "out1", "out0")]  # stride 32, 16, 8
        num_classes = len(self.class_names)
        decoded = []
        for i, pred in enumerate(outputs):
            nx, ny = mat_in.w // self.stride[i], mat_in.h // self.stride[i]
            if self.grid[i].shape[1:3] != (ny, nx):
                self.grid[i] = make_grid(nx, ny)
            cls, box = np.split(pred.transpose((1, 2, 0)), [num_classes], -1)
            # each side's distance is the expectation of a softmax over reg_max bins
            bins = softmax(box.reshape(-1, self.reg_max)).reshape(ny, nx, 4, self.reg_max)
            dist = bins @ np.arange(0, self.reg_max, dtype=np.float32)
            cls = sigmoid(cls)
            x1y1 = (self.grid[i][0] + 0.5 - dist[..., :2]) * self.stride[i]
            x2y2 = (self.grid[i][0] + 0.5 + dist[..., 2:]) * self.stride[i]
            rows = np.concatenate([x1y1, x2y2, cls.max(-1, keepdims=True), cls], -1)
            decoded.append(rows.reshape((1, -1, num_classes + 5)))
        result = yolo_nms(np.concatenate(decoded, 1), self.prob_threshold, self.nms_threshold, False)
        return letterbox_objects(result, scale, wpad, hpad)
