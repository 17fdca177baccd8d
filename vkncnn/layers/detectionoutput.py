"""DetectionOutput: the SSD head. Decodes box offsets against prior boxes, then per class
keeps confident boxes, sorts them, keeps nms_top_k, runs NMS, and finally keeps the
keep_top_k best over all classes.

Bottoms: location (4 per prior), confidence (num_class per prior, class 0 = background),
priorbox (PriorBox's (2, 4*num_prior): boxes then variances). Extra bottoms are ignored,
as ncnn does. num_class = -233 selects MXNet's MultiBoxDetection layout: priorbox is
(num_prior, 4), confidence is (num_class, num_prior), variances come from params 5-8.

Output (n, 6) rows [label, score, x1, y1, x2, y2], best first; when nothing is detected
ncnn leaves the output empty (dims 0), and so do we.

Where we knowingly differ: ncnn skips decoding a prior whose background score is
>= 1 - confidence_threshold and leaves that box uninitialised; with softmaxed scores no
such prior can pass the threshold, otherwise ncnn would output garbage. We decode it.
"""

import numpy as np

from vkncnn.cpu_fallback import detection
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer

MXNET_STYLE = -233


def ncnn_flat(blob: np.ndarray, name: str) -> np.ndarray:
    """The values as ncnn's flat pointer walks them. A multi-channel 3-D/4-D ncnn Mat pads
    each channel to 16 bytes, so a flat walk would read the padding: refuse those."""
    if blob.ndim >= 3 and blob.shape[0] > 1:
        plane = int(np.prod(blob.shape[1:]))
        if plane % 4:
            raise ShapeError(f"DetectionOutput reads {name} as one flat array, but shape {blob.shape} "
                             f"has {blob.shape[0]} channels whose planes ncnn pads to 16 bytes; "
                             f"flatten it first")
    return blob.reshape(-1)


def _need(values: np.ndarray, count: int, name: str, why: str) -> np.ndarray:
    if values.size < count:
        raise ShapeError(f"DetectionOutput {name} has {values.size} values, needs {count} ({why})")
    return values[:count]


@register_layer("DetectionOutput")
class DetectionOutput(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.num_class = pd.get(0, 0)
        self.nms_threshold = pd.get(1, 0.05)
        self.nms_top_k = pd.get(2, 300)
        self.keep_top_k = pd.get(3, 100)
        self.confidence_threshold = pd.get(4, 0.5)
        self.variances = np.array([pd.get(5, 0.1), pd.get(6, 0.1), pd.get(7, 0.2), pd.get(8, 0.2)],
                                  np.float32)
        if self.num_class < 0 and self.num_class != MXNET_STYLE:
            raise ParamError(f"DetectionOutput num_class (param 0) must be >= 0 or -233 (mxnet), "
                             f"got {self.num_class}")
        for key, name in ((2, "nms_top_k"), (3, "keep_top_k")):
            if getattr(self, name) < 0:
                # ncnn resizes its box list to this count and aborts; Caffe's -1 (keep all)
                # has to be written as a large number for ncnn
                raise ParamError(f"DetectionOutput {name} (param {key}) must be >= 0, "
                                 f"got {getattr(self, name)}")
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) < 3:
            raise ShapeError(f"DetectionOutput needs 3 bottoms (location, confidence, priorbox), "
                             f"got {len(bottoms)}")
        location, confidence, priorbox = bottoms[:3]
        mxnet = self.num_class == MXNET_STYLE
        plane = priorbox.reshape(priorbox.shape[0], -1, priorbox.shape[-1])[0] if priorbox.ndim >= 3 \
            else np.atleast_2d(priorbox)  # channel 0 as rows of w, what ncnn's row(i) reads
        if mxnet:
            num_prior = priorbox.shape[-2] if priorbox.ndim >= 2 else 1
            num_class = confidence.shape[-2] if confidence.ndim >= 2 else 1
            priors = _need(plane.reshape(-1), num_prior * 4, "priorbox", "4 per prior").reshape(-1, 4)
            variances = np.broadcast_to(self.variances, (num_prior, 4))
        else:
            if plane.shape[0] < 2:
                raise ShapeError(f"DetectionOutput priorbox must have 2 rows (boxes, variances), "
                                 f"got shape {priorbox.shape}")
            num_prior = plane.shape[1] // 4
            num_class = self.num_class
            priors = plane[0, :num_prior * 4].reshape(-1, 4)
            variances = plane[1, :num_prior * 4].reshape(-1, 4)
        loc = _need(ncnn_flat(location, "location"), num_prior * 4, "location",
                    f"4 per prior, {num_prior} priors").reshape(-1, 4)
        conf = _need(ncnn_flat(confidence, "confidence"), num_prior * num_class, "confidence",
                     f"{num_class} classes x {num_prior} priors")
        # caffe-ssd scores are (num_prior, num_class), mxnet-ssd (num_class, num_prior)
        scores = conf.reshape(num_class, num_prior).T if mxnet else conf.reshape(num_prior, num_class)
        if num_class < 2:
            return [detection.empty_output()]
        boxes = detection.decode_center_size(loc, priors, variances)
        return [detection.ssd_detection_output(boxes, scores, self.confidence_threshold,
                                               self.nms_threshold, self.nms_top_k, self.keep_top_k)]
