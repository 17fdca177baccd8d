"""Drawing detections, faces and poses with OpenCV, as ncnn's examples show them.

OpenCV is optional: it is imported when a drawing is asked for, and its absence is a
MissingPackageError that says what to install.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

import numpy as np

from ..errors import MissingPackageError
from .objects import Detect_Object, Face_Object, KeyPoint, Rect

__all__ = ["draw_detection_objects", "draw_faceobjects", "draw_pose", "print_topk"]

_BONES = [(0, 1), (1, 3), (0, 2), (2, 4), (5, 6), (5, 7), (7, 9), (6, 8), (8, 10), (5, 11), (6, 12),
          (11, 12), (11, 13), (12, 14), (13, 15), (14, 16)]


def _cv2() -> ModuleType:
    try:
        import cv2  # lazy: optional, only drawing needs it
    except ImportError as e:
        raise MissingPackageError("drawing needs OpenCV (the cv2 module), which is not installed: "
                                  "pip install opencv-python") from e
    return cv2


def _label_box(cv2: ModuleType, image: np.ndarray, rect: Rect, text: str) -> None:
    """The text on a white box above the rectangle, kept inside the image."""
    (tw, th), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
    x = rect.x
    y = max(rect.y - th - baseline, 0)
    if x + tw > image.shape[1]:
        x = image.shape[1] - tw
    cv2.rectangle(image, (int(x), int(y)), (int(x + tw), int(y + th + baseline)), (255, 255, 255), -1)
    cv2.putText(image, text, (int(x), int(y + th)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0))


def _box(cv2: ModuleType, image: np.ndarray, rect: Rect) -> None:
    cv2.rectangle(image, (int(rect.x), int(rect.y)), (int(rect.x + rect.w), int(rect.y + rect.h)), (255, 0, 0))


def _show(cv2: ModuleType, image: np.ndarray) -> None:
    cv2.imshow("image", image)
    cv2.waitKey(0)


def draw_detection_objects(image: np.ndarray, class_names: Sequence[str], objects: Sequence[Detect_Object],
                           min_prob: float = 0.0) -> None:
    """Print and draw every object of at least min_prob, then show the image."""
    cv2 = _cv2()
    for obj in objects:
        if obj.prob < min_prob:
            continue
        r = obj.rect
        print(f"{int(obj.label)} = {obj.prob:.5f} at {r.x:.2f} {r.y:.2f} {r.w:.2f} x {r.h:.2f}\n")
        _box(cv2, image, r)
        _label_box(cv2, image, r, f"{class_names[int(obj.label)]} {obj.prob * 100:.1f}%")
    _show(cv2, image)


def print_topk(cls_scores: np.ndarray, topk: int) -> None:
    """Print the topk best class indexes and their scores, best first."""
    best = np.argsort(cls_scores)[::-1][0:topk]
    for index, score in zip(best, cls_scores[best]):
        print(f"{int(index)}={score:f}")


def draw_faceobjects(image: np.ndarray, faceobjects: Sequence[Face_Object]) -> None:
    """Print and draw every face with its five landmarks, then show the image."""
    cv2 = _cv2()
    for obj in faceobjects:
        r = obj.rect
        print(f"{obj.prob:.5f} at {r.x:.2f} {r.y:.2f} {r.w:.2f} x {r.h:.2f}")
        _box(cv2, image, r)
        for point in obj.landmark[:5]:
            cv2.circle(image, (int(point.x), int(point.y)), 2, (0, 255, 255), -1)
        _label_box(cv2, image, r, "%.1f%%" % (obj.prob * 100))
    _show(cv2, image)


def draw_pose(image: np.ndarray, keypoints: Sequence[KeyPoint]) -> None:
    """Draw the COCO skeleton between confident keypoints (prob >= 0.2), then show the image."""
    cv2 = _cv2()
    for a, b in _BONES:
        p1, p2 = keypoints[a], keypoints[b]
        if p1.prob >= 0.2 and p2.prob >= 0.2:
            cv2.line(image, (int(p1.p.x), int(p1.p.y)), (int(p2.p.x), int(p2.p.y)), (255, 0, 0), 2)
    for kp in keypoints:
        print(f"{kp.p.x:.2f} {kp.p.y:.2f} = {kp.prob:.5f}")
        if kp.prob >= 0.2:
            cv2.circle(image, (int(kp.p.x), int(kp.p.y)), 3, (0, 255, 0), -1)
    _show(cv2, image)
