"""Proposal: Faster R-CNN's region proposal layer (RPN output -> ROIs).

Params: 0 feat_stride 16, 1 base_size 16, 2 pre_nms_topN 6000, 3 after_nms_topN 300,
4 nms_thresh 0.7, 5 min_size 16. Anchors use ncnn's fixed ratios (0.5, 1, 2) and scales
(8, 16, 32). Bottoms: scores (2A, h, w), bbox deltas (4A, h, w), im_info [h, w, scale].
Tops: rois (n, 1, 4) [x1, y1, x2, y2], and optionally scores (n, 1, 1); empty when no
box survives.
"""

import numpy as np

from vkncnn.cpu_fallback import proposal
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Proposal")
class Proposal(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.feat_stride = pd.get(0, 16)
        self.base_size = pd.get(1, 16)
        self.pre_nms_topN = pd.get(2, 6000)
        self.after_nms_topN = pd.get(3, 300)
        self.nms_thresh = pd.get(4, 0.7)
        self.min_size = pd.get(5, 16)
        if not 1 <= self.base_size <= 4096:
            raise ParamError(f"Proposal {self.name!r}: base_size (param 1) must be 1..4096, got {self.base_size}")
        self.anchors = proposal.generate_anchors(self.base_size)
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) < 3:
            raise ShapeError(f"Proposal {self.name!r} needs 3 bottoms (scores, bbox deltas, im_info), "
                             f"got {len(bottoms)}")
        scores, deltas, im_info = (np.asarray(b, np.float32) for b in bottoms[:3])
        a = self.anchors.shape[0]
        if scores.ndim != 3 or scores.shape[0] < 2 * a:
            raise ShapeError(f"Proposal {self.name!r}: scores must be (2 x {a} anchors, h, w), got {scores.shape}")
        if deltas.ndim != 3 or deltas.shape[0] < 4 * a or deltas.shape[1:] != scores.shape[1:]:
            raise ShapeError(f"Proposal {self.name!r}: bbox deltas must be (4 x {a} anchors, {scores.shape[1]}, "
                             f"{scores.shape[2]}), got {deltas.shape}")
        info = im_info.reshape(-1) if im_info.ndim < 3 else im_info[0].reshape(-1)
        if info.size < 3:
            raise ShapeError(f"Proposal {self.name!r}: im_info needs [height, width, scale], got {im_info.shape}")
        boxes, kept = proposal.proposals(scores, deltas, info, self.anchors, self.feat_stride, self.pre_nms_topN,
                                         self.after_nms_topN, self.nms_thresh, self.min_size)
        tops = [boxes.reshape(-1, 1, 4), kept.reshape(-1, 1, 1)]
        return tops[:max(1, len(self.tops))]
