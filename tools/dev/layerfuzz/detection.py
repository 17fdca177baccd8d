"""Fuzz cases for the detection and ROI layers: DetectionOutput, Yolov3DetectionOutput,
YoloDetectionOutput, PriorBox, Proposal, ROIAlign, ROIPooling, PSROIPooling.

Scores are drawn spread out (no near-ties): which of two equal scores ncnn's sort keeps
first is covered by the layers' own tests, not by random draws. Boxes stay inside the
map, where ncnn's ROI kernels read only valid memory.
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import chance, extent, floats, pick

DETECT_PATHS = ("cpu", "gpu")  # their inputs come as fp32 heads; fp16 storage would reorder near-ties


def _f32(a) -> np.ndarray:
    return np.asarray(a, np.float32)


def detectionoutput(rng):
    num_prior, num_class = extent(rng, 1, 120), extent(rng, 2, 8)
    loc = rng.normal(0, 1, num_prior * 4)
    logits = rng.normal(0, 2.5, (num_prior, num_class))
    conf = np.exp(logits - logits.max(1, keepdims=True))
    conf /= conf.sum(1, keepdims=True)
    x0, y0 = rng.uniform(0, 0.6, num_prior), rng.uniform(0, 0.6, num_prior)
    priors = np.stack([x0, y0, x0 + rng.uniform(0.05, 0.4, num_prior), y0 + rng.uniform(0.05, 0.4, num_prior)], 1)
    var = rng.uniform(0.05, 0.3, (num_prior, 4))
    p = {0: num_class, 1: floats(rng, 1, 0.2, 0.7)[0], 4: floats(rng, 1, 0.01, 0.4)[0]}
    if chance(rng, 0.4):
        p[2] = extent(rng, 1, 400)
    if chance(rng, 0.4):
        p[3] = extent(rng, 1, 200)
    if chance(rng, 0.25):  # mxnet layout: scores (num_class, num_prior), priors (num_prior, 4)
        p[0] = -233
        p.update({5: 0.1, 6: 0.1, 7: 0.2, 8: 0.2})
        ins = [_f32(loc), _f32(conf.T), _f32(priors)]
        return Case("DetectionOutput", p, ins, paths=DETECT_PATHS)
    ins = [_f32(loc), _f32(conf.reshape(-1)), _f32(np.stack([priors.reshape(-1), var.reshape(-1)]))]
    return Case("DetectionOutput", p, ins, paths=DETECT_PATHS)


_TINY = [10.0, 14.0, 23.0, 27.0, 37.0, 58.0, 81.0, 82.0, 135.0, 169.0, 344.0, 319.0]


def yolov3detectionoutput(rng):
    num_class, num_box = extent(rng, 1, 6), extent(rng, 1, 3)
    n_scales = extent(rng, 1, 3)
    mask = [float(m) for m in rng.choice(6, size=num_box * n_scales, replace=True)]
    scales = [float(s) for s in sorted(rng.choice([8.0, 16.0, 32.0], size=n_scales, replace=True))]
    p = {0: num_class, 1: num_box, 2: floats(rng, 1, 0.1, 0.6)[0], 3: floats(rng, 1, 0.3, 0.7)[0],
         4: _TINY, 5: mask, 6: scales}
    ins = [_f32(rng.uniform(-4, 2, (num_box * (5 + num_class), extent(rng, 2, 9), extent(rng, 2, 9))))
           for _ in range(n_scales)]
    return Case("Yolov3DetectionOutput", p, ins, paths=DETECT_PATHS)


def yolodetectionoutput(rng):
    num_class, num_box = extent(rng, 1, 6), extent(rng, 1, 4)
    biases = [float(v) for v in rng.uniform(0.5, 4, 2 * num_box).astype(np.float16)]
    p = {0: num_class, 1: num_box, 2: floats(rng, 1, 0.2, 0.6)[0], 3: floats(rng, 1, 0.3, 0.7)[0], 4: biases}
    x = _f32(rng.uniform(-3, 3, (num_box * (5 + num_class), extent(rng, 2, 8), extent(rng, 2, 8))))
    return Case("YoloDetectionOutput", p, [x], paths=DETECT_PATHS)


def priorbox(rng):
    feat = (extent(rng, 1, 6), extent(rng, 1, 7), extent(rng, 1, 7))
    mins = floats(rng, extent(rng, 1, 2), 10, 60)
    p = {0: mins}
    if chance(rng, 0.6):
        p[1] = [m + floats(rng, 1, 5, 40)[0] for m in mins]
    if chance(rng, 0.7):
        p[2] = [pick(rng, (2.0, 3.0, 0.5))] + ([pick(rng, (1.0, 3.0))] if chance(rng, 0.4) else [])
    for k, lo, hi in ((3, 0.05, 0.3), (4, 0.05, 0.3), (5, 0.1, 0.4), (6, 0.1, 0.4)):
        if chance(rng, 0.3):
            p[k] = floats(rng, 1, lo, hi)[0]
    p[7], p[8] = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    if chance(rng, 0.5):
        p[9], p[10] = -233, -233
    else:
        p[9], p[10] = extent(rng, 64, 320), extent(rng, 64, 320)
    if chance(rng, 0.3):
        p[11], p[12] = floats(rng, 1, 4, 16)[0], floats(rng, 1, 4, 16)[0]
    p[13] = pick(rng, (0.0, 0.5))
    if chance(rng, 0.2):
        p[14] = 1
    if chance(rng, 0.2):
        p[15] = 1
    image = np.zeros((3, extent(rng, 40, 120), extent(rng, 40, 120)), np.float32)
    return Case("PriorBox", p, [np.zeros(feat, np.float32), image])


def proposal(rng):
    h, w, stride = extent(rng, 2, 8), extent(rng, 2, 8), pick(rng, (8, 16))
    p = {0: stride}
    if chance(rng, 0.5):
        p[2], p[3] = extent(rng, 10, 200), extent(rng, 1, 60)
    if chance(rng, 0.5):
        p[4] = floats(rng, 1, 0.3, 0.8)[0]
    if chance(rng, 0.4):
        p[5] = pick(rng, (0, 4, 16))
    # distinct scores: the order of equal ones is ncnn's sort's business
    scores = rng.permutation(18 * h * w).reshape(18, h, w) / (18 * h * w)
    ins = [_f32(scores), _f32(rng.uniform(-0.3, 0.3, (36, h, w))), _f32([h * stride, w * stride, 1.0])]
    return Case("Proposal", p, ins, n_outputs=int(rng.integers(1, 3)), paths=DETECT_PATHS)


def _roi_box(rng, h: int, w: int, scale: float) -> np.ndarray:
    x1, y1 = rng.uniform(0, w * 0.6), rng.uniform(0, h * 0.6)
    x2, y2 = rng.uniform(x1, w - 1), rng.uniform(y1, h - 1)
    return _f32(np.float32([x1, y1, x2, y2]) / np.float32(scale))


def roialign(rng):
    c, h, w = extent(rng, 1, 8), extent(rng, 3, 14), extent(rng, 3, 14)
    scale = pick(rng, (1.0, 0.5, 0.25))
    p = {0: extent(rng, 1, 5), 1: extent(rng, 1, 5), 2: scale, 3: pick(rng, (0, 0, 1, 2)),
         4: int(rng.integers(0, 2)), 5: int(rng.integers(0, 2))}
    x = _f32(rng.uniform(-1.5, 1.5, (c, h, w)).astype(np.float16))
    return Case("ROIAlign", p, [x, _roi_box(rng, h, w, scale)], tol=2e-4)


def roipooling(rng):
    c, h, w = extent(rng, 1, 8), extent(rng, 3, 14), extent(rng, 3, 14)
    scale = pick(rng, (1.0, 0.5, 0.25))
    p = {0: extent(rng, 1, 5), 1: extent(rng, 1, 5), 2: scale}
    x = _f32(rng.uniform(-1.5, 1.5, (c, h, w)).astype(np.float16))
    return Case("ROIPooling", p, [x, _roi_box(rng, h, w, scale)])


def psroipooling(rng):
    pw, ph, out = extent(rng, 1, 4), extent(rng, 1, 4), extent(rng, 1, 4)
    h, w = extent(rng, 3, 12), extent(rng, 3, 12)
    scale = pick(rng, (1.0, 0.5))
    x = _f32(rng.uniform(-1.5, 1.5, (out * pw * ph, h, w)).astype(np.float16))
    return Case("PSROIPooling", {0: pw, 1: ph, 2: scale, 3: out}, [x, _roi_box(rng, h, w, scale)])


GENERATORS = {
    "DetectionOutput": detectionoutput,
    "Yolov3DetectionOutput": yolov3detectionoutput,
    "YoloDetectionOutput": yolodetectionoutput,
    "PriorBox": priorbox,
    "Proposal": proposal,
    "ROIAlign": roialign,
    "ROIPooling": roipooling,
    "PSROIPooling": psroipooling,
}
