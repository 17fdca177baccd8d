"""Yolov3DetectionOutput: the YOLOv3/v4 head over one or more scales.

Each bottom b is a (num_box * (5 + num_class), h, w) map (of a 4-D blob ncnn reads depth
slice 0; other channel counts are refused, as ncnn does). For every cell and anchor:
x, y, w, h, objectness, then raw class logits. The anchor of box pp at scale b is
biases[2*mask[b*num_box + pp]] (w, h), measured in pixels of a net input of
anchors_scale[b] * (w, h). A box is kept when its score >= confidence_threshold; all
scales then go through one descending sort and one class-agnostic NMS.

Output (n, 6) rows [label + 1, score, x1, y1, x2, y2] in 0..1 units, or an empty blob.

ncnn's score is 1 / (1 + exp(-obj) * (1 + exp(-cls))) (its parentheses, not the
sigmoid product its comment names), and its NMS uses the decoded w*h as the box area;
both are reproduced, down to the fused multiply-adds of ncnn's x86 build, so that nearly
tied scores sort as in ncnn. Load-time checks mirror the ncnn build this was tested
against (1.0.20261020): masks must be whole indices of existing anchors, used anchors and
scales finite and positive, thresholds not NaN.
"""

import numpy as np

from vkncnn.cpu_fallback import detection
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer

INT_LIMIT = 2147483648.0  # anchors_scale * w must fit ncnn's int net size


def _mask_values(pd) -> np.ndarray:
    """Mask entries as floats. ncnn reads an integer-typed mask array by its bit pattern
    (ncnn's own model writer stores 3.0 as 1077936128), so we do too."""
    if pd.type(5) == 5:
        return pd.get(5, np.zeros(0, np.int32)).astype(np.int32).view(np.float32)
    return pd.get_float_array(5)


@register_layer("Yolov3DetectionOutput")
class Yolov3DetectionOutput(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.num_class = pd.get(0, 20)
        self.num_box = pd.get(1, 5)
        self.confidence_threshold = pd.get(2, 0.01)
        self.nms_threshold = pd.get(3, 0.45)
        self.biases = pd.get_float_array(4)
        self.mask = _mask_values(pd)
        self.anchors_scale = pd.get_float_array(6)
        self._validate()
        self.anchor_index = self.mask.astype(np.int64)
        return 0

    def _validate(self) -> None:
        if self.num_class <= 0 or self.num_box <= 0:
            raise ParamError(f"Yolov3DetectionOutput needs num_class (0) and num_box (1) > 0, "
                             f"got {self.num_class} and {self.num_box}")
        for key, name in ((2, "confidence_threshold"), (3, "nms_threshold")):
            if np.isnan(getattr(self, name)):
                raise ParamError(f"Yolov3DetectionOutput {name} (param {key}) is NaN")
        for key, name in ((4, "biases"), (5, "mask"), (6, "anchors_scale")):
            if len(getattr(self, name)) == 0:
                raise ParamError(f"Yolov3DetectionOutput needs {name} (param {key}), got none")
        mask, biases = self.mask, self.biases
        if len(mask) % self.num_box:
            raise ParamError(f"Yolov3DetectionOutput mask (param 5) has {len(mask)} entries, "
                             f"not a multiple of num_box {self.num_box}")
        groups = len(mask) // self.num_box
        if groups > len(self.anchors_scale):
            raise ParamError(f"Yolov3DetectionOutput mask (param 5) describes {groups} scales but "
                             f"anchors_scale (param 6) has {len(self.anchors_scale)}")
        bad = ~np.isfinite(mask) | (mask < 0) | (mask != np.floor(mask)) | (mask * 2 + 1 >= len(biases))
        if np.any(bad):
            raise ParamError(f"Yolov3DetectionOutput mask (param 5) entries must be whole anchor indices "
                             f"0..{len(biases) // 2 - 1}, got {mask.tolist()}")
        used = np.concatenate([biases[mask.astype(np.int64) * 2], biases[mask.astype(np.int64) * 2 + 1]])
        if not np.all(np.isfinite(used) & (used > 0)):
            raise ParamError(f"Yolov3DetectionOutput anchors (param 4) used by the mask must be finite "
                             f"and > 0, got {used.tolist()}")
        scales = self.anchors_scale[:groups]
        if not np.all(np.isfinite(scales) & (scales > 0) & (scales < INT_LIMIT)):
            raise ParamError(f"Yolov3DetectionOutput anchors_scale (param 6) must be finite, > 0 and "
                             f"< 2^31, got {scales.tolist()}")

    def forward_cpu(self, bottoms, opt):
        groups = len(self.mask) // self.num_box
        if len(bottoms) > groups:
            raise ShapeError(f"Yolov3DetectionOutput got {len(bottoms)} bottoms but its mask and "
                             f"anchors_scale describe {groups} scales")
        found = []
        per_box = 5 + self.num_class
        for b, blob in enumerate(bottoms):
            if blob.ndim not in (3, 4) or blob.shape[0] != self.num_box * per_box:
                raise ShapeError(f"Yolov3DetectionOutput bottom {b} must be (num_box*(5+num_class), h, w) "
                                 f"= ({self.num_box * per_box}, h, w), got {blob.shape}")
            if blob.ndim == 4:
                blob = blob[:, 0]  # ncnn walks h*w values per channel: the first depth slice
            h, w = blob.shape[1:]
            scale = np.float32(self.anchors_scale[b])
            net_w, net_h = int(scale * np.float32(w)), int(scale * np.float32(h))
            anchors = self.anchor_index[b * self.num_box:(b + 1) * self.num_box]
            found.append(detection.yolov3_candidates(
                blob, self.num_class, self.num_box, self.biases[anchors * 2], self.biases[anchors * 2 + 1],
                net_w, net_h, self.confidence_threshold))
        if not found:
            return [detection.empty_output()]
        labels, scores, boxes, areas = (np.concatenate(parts) for parts in zip(*found))
        return [detection.sort_nms(labels.astype(np.float32), scores, boxes, areas, self.nms_threshold,
                                   scaled_compare=True)]
