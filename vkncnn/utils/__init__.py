"""ncnn.utils for vkncnn: result objects, numpy post-processing helpers, drawing, and
the file helpers of the model zoo (nothing is ever downloaded)."""

import numpy as np  # noqa: F401  (ncnn.utils exposes it under this name too)

from . import functional  # noqa: F401
from .download import check_sha1, download
from .objects import Detect_Object, Face_Object, KeyPoint, Point, Rect
from .visual import draw_detection_objects, draw_faceobjects, draw_pose, print_topk

__all__ = ["Detect_Object", "Face_Object", "KeyPoint", "Point", "Rect", "check_sha1", "download",
           "draw_detection_objects", "draw_faceobjects", "draw_pose", "print_topk"]
