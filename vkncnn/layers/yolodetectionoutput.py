"""YoloDetectionOutput: the YOLOv2 region head.

Each bottom is a (num_box * (5 + num_class), h, w) map (extra trailing channels are
ignored, as ncnn's integer division does; of a 4-D blob only depth slice 0 is read).
Per anchor pp: x, y, w, h, objectness, class
logits; the class logits are softmaxed, the anchor is (biases[2pp], biases[2pp+1]) in
grid cells, and score = sigmoid(obj) * best class probability. Boxes with
score >= confidence_threshold from all bottoms go through one sort and one NMS.

ncnn runs this layer in place: top 0 becomes the (n, 6) detections [label + 1, score,
x1, y1, x2, y2], and the bottoms keep their softmaxed class channels. So with no
detection top 0 is bottom 0 softmaxed, and any further top i is bottom i softmaxed.
"""

import numpy as np

from vkncnn.cpu_fallback import detection
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("YoloDetectionOutput")
class YoloDetectionOutput(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = True

    def load_param(self, pd) -> int:
        self.num_class = pd.get(0, 20)
        self.num_box = pd.get(1, 5)
        self.confidence_threshold = pd.get(2, 0.01)
        self.nms_threshold = pd.get(3, 0.45)
        self.biases = pd.get_float_array(4)
        if self.num_class <= 0 or self.num_box <= 0:
            raise ParamError(f"YoloDetectionOutput needs num_class (0) and num_box (1) > 0, "
                             f"got {self.num_class} and {self.num_box}")
        if len(self.biases) < 2 * self.num_box:
            raise ParamError(f"YoloDetectionOutput needs 2 biases (anchor w, h) per box: "
                             f"{2 * self.num_box} for num_box {self.num_box}, got {len(self.biases)}")
        return 0

    def forward_cpu(self, bottoms, opt):
        per_box = 5 + self.num_class
        softmaxed, found = [], []
        for b, blob in enumerate(bottoms):
            if blob.ndim not in (3, 4) or blob.shape[0] // self.num_box != per_box:
                raise ShapeError(f"YoloDetectionOutput bottom {b} must be (num_box*(5+num_class), h, w) "
                                 f"= ({self.num_box * per_box}, h, w), got {blob.shape}")
            region = detection.yolo_region_softmax(blob, self.num_class, self.num_box)
            softmaxed.append(region)
            # ncnn walks h*w values per channel: a 4-D blob's first depth slice
            plane = region if region.ndim == 3 else region[:, 0]
            found.append(detection.yolo_region_candidates(plane, self.num_class, self.num_box,
                                                          self.biases, self.confidence_threshold))
        if not found:
            raise ShapeError("YoloDetectionOutput needs at least one bottom")
        labels, scores, boxes, areas = (np.concatenate(parts) for parts in zip(*found))
        result = detection.sort_nms(labels.astype(np.float32), scores, boxes, areas, self.nms_threshold)
        tops = softmaxed[:max(1, len(self.tops))]
        if result.size:
            tops[0] = result
        return tops
