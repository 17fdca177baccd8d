"""What the model zoo returns: boxes, detections, faces with landmarks, pose keypoints."""

from __future__ import annotations

import numpy as np

__all__ = ["Detect_Object", "Face_Object", "KeyPoint", "Point", "Rect"]


class Point:
    def __init__(self) -> None:
        self.x = 0.0
        self.y = 0.0


class Rect:
    """A box by its top-left corner and size."""

    def __init__(self, x: float = 0, y: float = 0, w: float = 0, h: float = 0) -> None:
        self.x = x
        self.y = y
        self.w = w
        self.h = h

    def area(self) -> float:
        return self.w * self.h

    def intersection_area(self, b: Rect) -> float:
        # the width/height of the span between the inner edges, taken as a magnitude:
        # this is ncnn's definition (disjoint boxes give a positive value too), which the
        # zoo's NMS relies on for identical results
        left, top = np.maximum(self.x, b.x), np.maximum(self.y, b.y)
        right, bottom = np.minimum(self.x + self.w, b.x + b.w), np.minimum(self.y + self.h, b.y + b.h)
        return np.abs(right - left) * np.abs(bottom - top)


class Detect_Object:  # noqa: N801  (ncnn's name)
    def __init__(self, label: float | str = 0, prob: float = 0, x: float = 0, y: float = 0, w: float = 0,
                 h: float = 0) -> None:
        self.label = label  # the class index (a float, as ncnn's rows give it), or its name (YoloV7_Tiny)
        self.prob = prob
        self.rect = Rect(x, y, w, h)


class Face_Object:  # noqa: N801  (ncnn's name)
    def __init__(self) -> None:
        self.prob = 0.0
        self.rect = Rect()
        self.landmark: list[Point] = []


class KeyPoint:
    def __init__(self) -> None:
        self.p = Point()
        self.prob = 0.0
