"""What the zoo's models share: loading a net from the model folder, turning an image
into the network input, and reading detections back."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..layer import Layer
from ..mat import Mat
from ..mat_ops import BorderType, copy_make_border
from ..net import Net
from ..utils.functional import nms
from ..utils.objects import Detect_Object, Face_Object
from .model_store import get_model_file


class ZooModel:
    """A Net loaded from the model folder, with ncnn's num_threads / use_gpu settings."""

    def __init__(self, param: str, weights: str, num_threads: int = 1, use_gpu: bool = False,
                 model_dir: str | os.PathLike | None = None,
                 custom_layers: Iterable[tuple[str, Callable[[], Layer]]] = ()) -> None:
        self.num_threads = num_threads
        self.use_gpu = use_gpu
        self.net = Net()
        self.net.opt.use_vulkan_compute = use_gpu
        self.net.opt.num_threads = num_threads
        for type_name, creator in custom_layers:
            self.net.register_custom_layer(type_name, creator)
        self.net.load_param(get_model_file(param, root=model_dir))
        self.net.load_model(get_model_file(weights, root=model_dir))

    def __del__(self) -> None:
        self.net = None


def image_input(img: np.ndarray, pixel_type: int, width: int, height: int, mean_vals: Sequence[float],
                norm_vals: Sequence[float]) -> Mat:
    """The BGR/RGB image (h, w, 3 uint8) resized to width x height, normalised."""
    mat = Mat.from_pixels_resize(img, pixel_type, img.shape[1], img.shape[0], width, height)
    mat.substract_mean_normalize(mean_vals, norm_vals)
    return mat


def letterbox_input(img: np.ndarray, pixel_type: int, target_size: int, pad_value: float, mean_vals: Sequence[float],
                    norm_vals: Sequence[float]) -> tuple[Mat, float, int, int]:
    """Resize the longer side to target_size, pad both sides to multiples of 32 with
    pad_value, normalise. Returns (input Mat, scale, wpad, hpad)."""
    img_h, img_w = img.shape[0], img.shape[1]
    if img_w > img_h:
        scale = float(target_size) / img_w
        w, h = target_size, int(img_h * scale)
    else:
        scale = float(target_size) / img_h
        w, h = int(img_w * scale), target_size
    mat = Mat.from_pixels_resize(img, pixel_type, img_w, img_h, w, h)
    wpad = (w + 31) // 32 * 32 - w
    hpad = (h + 31) // 32 * 32 - h
    padded = copy_make_border(mat, hpad // 2, hpad - hpad // 2, wpad // 2, wpad - wpad // 2,
                              BorderType.BORDER_CONSTANT, float(pad_value))
    padded.substract_mean_normalize(mean_vals, norm_vals)
    return padded, scale, wpad, hpad


def detection_rows(mat_out: Mat, img_w: int, img_h: int) -> list[Detect_Object]:
    """DetectionOutput rows (label, prob, x1, y1, x2, y2 in 0..1) as objects in image pixels."""
    objects = []
    for i in range(mat_out.h if mat_out.dims else 0):
        label, prob, x1, y1, x2, y2 = mat_out.row(i)[:6]
        x, y = x1 * img_w, y1 * img_h
        objects.append(Detect_Object(label, prob, x, y, x2 * img_w - x, y2 * img_h - y))
    return objects


def nms_sorted_objects(objects: Sequence[Detect_Object | Face_Object], nms_threshold: float) -> list[int]:
    """Indexes kept by greedy NMS over objects sorted best first (ncnn's nms_sorted_bboxes,
    with Rect.intersection_area's definition of overlap)."""
    picked: list[int] = []
    areas = [obj.rect.area() for obj in objects]
    for i, a in enumerate(objects):
        keep = True
        for j in picked:
            inter = a.rect.intersection_area(objects[j].rect)
            if inter / (areas[i] + areas[j] - inter) > nms_threshold:
                keep = False
        if keep:
            picked.append(i)
    return picked


def yolo_nms(prediction: np.ndarray, conf_thres: float, iou_thres: float, boxes_are_centres: bool, max_det: int = 300,
             max_wh: int = 4096) -> np.ndarray | None:
    """Per-class NMS over (1, n, 5 + classes) predictions: [box, objectness, class scores].

    Every (box, class) pair scoring above conf_thres is a candidate (class score times
    objectness when boxes_are_centres, YOLOv5's head; the raw class score for YOLOv8's,
    whose boxes are already corners). Returns rows (x1, y1, x2, y2, score, class), or
    None when nothing passes, as ncnn's zoo does."""
    x = prediction[0]
    x = x[x[:, 4] > conf_thres]
    if not x.shape[0]:
        return None
    scores = x[:, 5:] * x[:, 4:5] if boxes_are_centres else x[:, 5:]
    boxes = x[:, :4].copy()
    if boxes_are_centres:
        half = boxes[:, 2:4] / 2
        boxes = np.concatenate([boxes[:, 0:2] - half, boxes[:, 0:2] + half], axis=1)
    rows, classes = (scores > conf_thres).nonzero()
    x = np.concatenate((boxes[rows], scores[rows, classes, None], classes[:, None].astype(np.float32)), axis=1)
    if not x.shape[0]:
        return None
    offset = x[:, 5:6] * max_wh  # classes apart, so one NMS call keeps them apart
    keep = nms(x[:, :4] + offset, x[:, 4], iou_threshold=iou_thres)[:max_det]
    return x[keep]


def letterbox_objects(result: np.ndarray | None, scale: float, wpad: int, hpad: int) -> list[Detect_Object]:
    """NMS rows (x1, y1, x2, y2, score, class) in padded-input pixels -> objects in image pixels."""
    if result is None:
        return []
    return [Detect_Object(r[5], r[4], (r[0] - wpad / 2) / scale, (r[1] - hpad / 2) / scale,
                          (r[2] - r[0]) / scale, (r[3] - r[1]) / scale) for r in result]
