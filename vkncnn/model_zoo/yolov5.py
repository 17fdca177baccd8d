"""YOLOv5s on COCO, letterboxed to 640: the Focus stem as a custom layer, the anchor
decoding and class-aware NMS in numpy."""

from __future__ import annotations

import os

import numpy as np

from ..layer import Layer
from ..mat import Mat
from ..option import Option
from ..utils.functional import make_grid, sigmoid
from ._base import ZooModel, letterbox_input, letterbox_objects, yolo_nms
from .class_names import COCO_CLASSES

__all__ = ["YoloV5Focus", "YoloV5s"]


class YoloV5Focus(Layer):
    """Space-to-depth by 2: the four pixel phases stacked along the channels."""

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True

    def forward(self, bottom_blob: Mat, top_blob: Mat, opt: Option) -> int:  # type: ignore[override]
        # one_blob_only: one Mat in, one out (Layer.forward's lists are for multi-blob layers)
        x = np.asarray(bottom_blob)
        phases = [x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]]
        top_blob.clone_from(Mat(np.concatenate(phases)))
        return 0


class YoloV5s(ZooModel):
    def __init__(self, target_size: int = 640, prob_threshold: float = 0.25, nms_threshold: float = 0.45,
                 num_threads: int = 1, use_gpu: bool = False, *, model_dir: str | os.PathLike | None = None) -> None:
        self.target_size = target_size
        self.prob_threshold = prob_threshold
        self.nms_threshold = nms_threshold
        self.mean_vals: list[float] = []
        self.norm_vals = [1 / 255.0, 1 / 255.0, 1 / 255.0]
        super().__init__("yolov5s.param", "yolov5s.bin", num_threads, use_gpu, model_dir,
                         custom_layers=[("YoloV5Focus", YoloV5Focus)])
        self.grid = [make_grid(10, 6), make_grid(20, 12), make_grid(40, 24)]
        self.stride = np.array([32, 16, 8])
        self.anchor_grid = np.array([[116, 90, 156, 198, 373, 326], [30, 61, 62, 45, 59, 119],
                                     [10, 13, 16, 30, 33, 23]]).reshape((3, 1, 3, 1, 1, 2))
        self.class_names = list(COCO_CLASSES)

    def __call__(self, img):
        mat_in, scale, wpad, hpad = letterbox_input(img, Mat.PixelType.PIXEL_BGR2RGB, self.target_size, 114.0,
                                                    self.mean_vals, self.norm_vals)
        with self.net.create_extractor() as ex:
            ex.input("images", mat_in)
            outputs = [np.array(ex.extract(name)[1]) for name in ("801", "781", "output")]  # stride 32, 16, 8
        decoded = []
        for i, pred in enumerate(outputs):
            cells = pred.shape[1]
            if mat_in.w > mat_in.h:
                nx = mat_in.w // self.stride[i]
                ny = cells // nx
            else:
                ny = mat_in.h // self.stride[i]
                nx = cells // ny
            if self.grid[i].shape[1:3] != (ny, nx):
                self.grid[i] = make_grid(nx, ny)
            y = sigmoid(pred).reshape(pred.shape[0], ny, nx, pred.shape[2])
            y[..., 0:2] = (y[..., 0:2] * 2.0 - 0.5 + self.grid[i]) * self.stride[i]  # centre
            y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # size
            decoded.append(y.reshape(1, -1, y.shape[-1]))
        result = yolo_nms(np.concatenate(decoded, 1), self.prob_threshold, self.nms_threshold, True)
        return letterbox_objects(result, scale, wpad, hpad)
