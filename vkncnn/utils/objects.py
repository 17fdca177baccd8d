"""What the model zoo returns: boxes, detections, faces with landmarks, pose keypoints."""

import numpy as np

__all__ = ["Detect_Object", "Face_Object", "KeyPoint", "Point", "Rect"]


class Point:
    def __init__(self):
        self.x = 0.0
        self.y = 0.0


class Rect:
    """A box by its top-left corner and size."""

    def __init__(self, x=0, y=0, w=0, h=0):
        self.x = x
        self.y = y
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h

    def intersection_area(self, b):
        # the width/height of the span between the inner edges, taken as a magnitude:
        # this is ncnn's definition (disjoint boxes give a positive value too), which the
        # zoo's NMS relies on for identical results
        left, top = np.maximum(self.x, b.x), np.maximum(self.y, b.y)
        right, bottom = np.minimum(self.x + self.w, b.x + b.w), np.minimum(self.y + self.h, b.y + b.h)
        return np.abs(right - left) * np.abs(bottom - top)


class Detect_Object:  # noqa: N801  (ncnn's name)
    def __init__(self, label=0, prob=0, x=0, y=0, w=0, h=0):
        self.label = label
        self.prob = prob
        self.rect = Rect(x, y, w, h)


class Face_Object:  # noqa: N801  (ncnn's name)
    def __init__(self):
        self.prob = 0.0
        self.rect = Rect()
        self.landmark = []


class KeyPoint:
    def __init__(self):
        self.p = Point()
        self.prob = 0.0
