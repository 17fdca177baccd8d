"""Vision and signal layers with ncnn's grids from tests/test_<layer>.cpp: GridSample
(test_gridsample.cpp), Scale (test_scale.cpp), Bias (test_bias.cpp), LRN (test_lrn.cpp), MVN
(test_mvn.cpp), Normalize (test_normalize.cpp), ROIAlign (test_roialign.cpp), ROIPooling
(test_roipooling.cpp), Spectrogram (test_spectrogram.cpp), InverseSpectrogram
(test_inversespectrogram.cpp), PriorBox (test_priorbox.cpp), MemoryData (test_memorydata.cpp),
Yolov3DetectionOutput (test_yolov3detectionoutput.cpp)."""

from __future__ import annotations

import itertools

import numpy as np

from .registry import GridCase, case_rng, grid, nc


def _uniform(name: str, index: int, shape: tuple, lo: float, hi: float) -> np.ndarray:
    """A seeded input in [lo, hi): the range ncnn's test draws that input from."""
    return case_rng(name, 1000 + index).uniform(lo, hi, size=shape).astype(np.float32)


# (input, grid with permute_fusion 0) in ncnn's (w, h[, d], c) order; permute_fusion 1 moves the
# coordinate axis (2 or 3 long) from w to c
_GS_2D = [((3, 7, 1), (2, 11, 13)), ((8, 12, 16), (2, 24, 16))]
_GS_3D = [((5, 7, 11, 13), (3, 17, 11, 13)), ((16, 12, 11, 16), (3, 11, 12, 16))]


def _fused(grid_dims: tuple) -> tuple:
    return grid_dims[1:] + grid_dims[:1]


@grid("GridSample")
def gridsample(name: str) -> list:
    cases = []
    for pairs, sample_types in ((_GS_2D, (1, 2, 3)), (_GS_3D, (1, 2))):  # bicubic is 2-D only
        for (a, g), fusion in itertools.product(pairs, (0, 1)):
            gdims = _fused(g) if fusion else g
            for sample, padding, align in itertools.product(sample_types, (1, 2, 3), (0, 1)):
                # the grid runs a little past [-1, 1] (ncnn's RandomMat range) to reach the padding
                grid_mat = _uniform(name, len(cases), nc(*gdims), -1.2, 1.2)
                cases.append(GridCase({0: sample, 1: padding, 2: align, 3: fusion}, [], [nc(*a), grid_mat]))
    # not ncnn's: grid values out to +-3, two and more reflections past the edges. Left out:
    # bicubic with reflection and align_corner, whose taps then land beyond one mirror, where
    # ncnn's x86 code clamps in its scalar path but not in its AVX one (which points take
    # which path depends on their position), so ncnn has no single answer there
    for (a, g), sample_types in ((_GS_2D[0], (1, 2, 3)), (_GS_3D[0], (1, 2))):
        for sample, padding, align in itertools.product(sample_types, (1, 2, 3), (0, 1)):
            if (sample, padding, align) == (3, 3, 1):
                continue
            grid_mat = _uniform(name, len(cases), nc(*g), -3.0, 3.0)
            cases.append(GridCase({0: sample, 1: padding, 2: align}, [], [nc(*a), grid_mat]))
    # not in ncnn's grid: a grid of no points (ncnn refuses it)
    cases.append(GridCase({0: 1, 1: 1}, [], [nc(3, 7, 1), nc(2, 11, 0)], edge=True))
    return cases


def _lead_axis(dims: tuple) -> int:
    """ncnn's per-channel size: w of a 1-D Mat, h of a 2-D one, c otherwise (numpy's first axis)."""
    return nc(*dims)[0]


_SCALE_MATS = [(5, 3, 2, 24), (3, 5, 3, 13), (5, 3, 48), (5, 7, 24), (7, 9, 12), (3, 5, 13), (13, 48), (15, 24),
               (17, 12), (19, 15), (128,), (124,), (127,)]
_SCALE_ATTENTION = [(5, 3, 2, 24), (3, 5, 3, 13), (5, 6, 48), (5, 7, 24), (7, 9, 12), (3, 5, 13), (25, 48), (15, 24),
                    (17, 12), (19, 15), (128,), (124,), (127,)]


@grid("Scale")
def scale(name: str) -> list:
    cases = [GridCase({0: _lead_axis(m), 1: bias}, None, [nc(*m)]) for m in _SCALE_MATS for bias in (0, 1)]
    # scale_data_size -233: the scales come as a second input blob
    cases += [GridCase({0: -233}, [], [nc(*m), (_lead_axis(m),)]) for m in _SCALE_ATTENTION]
    cases.append(GridCase({0: 3, 1: 1}, None, [(3, 0, 5)], edge=True))  # not ncnn's: an empty map
    return cases


@grid("Bias")
def bias(name: str) -> list:
    mats = [(5, 6, 7, 24), (7, 8, 9, 12), (3, 4, 5, 13), (5, 7, 24), (7, 9, 12), (3, 5, 13)]
    return [GridCase({0: _lead_axis(m)}, None, [nc(*m)]) for m in mats]


@grid("LRN")
def lrn(name: str) -> list:
    # (region_type, local_size, alpha, beta, bias)
    rows = [(0, 1, 1.0, 0.75, 1.0), (0, 5, 2.0, 0.12, 1.33), (1, 1, 0.6, 0.4, 2.4), (1, 3, 1.0, 0.75, 0.5)]
    mats = [(11, 7, 12), (10, 8, 16), (12, 10, 9)]
    cases = [GridCase({0: region, 1: size, 2: alpha, 3: beta, 4: b}, [], [nc(*m)])
             for m in mats for region, size, alpha, beta, b in rows]
    # not ncnn's: even and wide windows (a window past every channel), a map of one channel
    for region, size in itertools.product((0, 1), (2, 4, 7, 21)):
        cases.append(GridCase({0: region, 1: size, 2: 1.5, 3: 0.6, 4: 0.8}, [], [nc(9, 6, 13)]))
    cases.append(GridCase({0: 0, 1: 5, 2: 1.0, 3: 0.75, 4: 1.0}, [], [nc(9, 6, 1)]))
    cases.append(GridCase({0: 1, 1: 3}, [], [(3, 0, 5)], edge=True))  # not ncnn's: an empty map
    return cases


@grid("MVN")
def mvn(name: str) -> list:
    # (mat, normalize_variance, across_channels, eps)
    rows = [((5, 4, 3, 3), 0, 0, 0.0001), ((5, 4, 3, 3), 1, 0, 0.001), ((3, 3, 2, 8), 0, 1, 0.0001),
            ((3, 3, 2, 8), 1, 1, 0.001)]
    return [GridCase({0: nv, 1: across, 2: eps}, [], [nc(*m)]) for m, nv, across, eps in rows]


_NORM_EPS = [(0.01, 0), (0.001, 1), (0.002, 2)]  # (eps, eps_mode)


def _normalize(m: tuple, across_spatial: int, across_channel: int, shared: int, eps: float, mode: int) -> GridCase:
    params = {0: across_spatial, 1: shared, 2: eps, 3: 1 if shared else m[-1], 4: across_channel, 9: mode}
    return GridCase(params, None, [nc(*m)])


@grid("Normalize")
def normalize(name: str) -> list:
    cases = []
    # (mats, across_spatial, across_channel)
    for mats, spatial, channel in ((((6, 4, 2), (5, 7, 8)), 1, 0), (((5, 6, 3), (3, 4, 8)), 0, 1),
                                   (((2, 3, 5), (4, 6, 8)), 1, 1)):
        for m in mats:
            for shared in (0, 1):
                cases += [_normalize(m, spatial, channel, shared, eps, mode) for eps, mode in _NORM_EPS]
    a, b = (5, 4, 3, 3), (3, 3, 2, 8)
    cases += [_normalize(a, 1, 0, 0, 0.01, 0), _normalize(a, 1, 0, 1, 0.001, 1), _normalize(b, 0, 1, 0, 0.002, 2),
              _normalize(b, 0, 1, 1, 0.01, 0), _normalize(a, 1, 1, 0, 0.001, 1), _normalize(b, 1, 1, 1, 0.002, 2)]
    cases.append(GridCase({0: 1, 3: 3, 4: 1}, None, [(3, 0, 5)], edge=True))  # not ncnn's: an empty map
    return cases


def _roi(name: str, index: int, w: int, h: int) -> np.ndarray:
    """A box (x1, y1, x2, y2) in input pixels, at least a pixel wide and tall, inside the input."""
    rng = case_rng(name, 2000 + index)
    x1 = rng.uniform(0.001, w - 2.001)
    x2 = rng.uniform(x1 + 1.001, w - 1.001)
    y1 = rng.uniform(0.001, h - 2.001)
    y2 = rng.uniform(y1 + 1.001, h - 1.001)
    return np.array([x1, y1, x2, y2], np.float32)


def _rois(name: str, index: int, w: int, h: int, scale: float) -> list:
    """ncnn's box (in map pixels, so spatial_scale shrinks it to a corner), the same box in
    image pixels (spatial_scale brings it onto the map), and a box reaching past the map."""
    box = _roi(name, index, w, h)
    past = np.array([-0.3 * w, -0.2 * h, 1.2 * w, 0.9 * h], np.float32) / np.float32(scale)
    return [box, box / np.float32(scale), past]


@grid("ROIAlign")
def roialign(name: str) -> list:
    # (w, h, c, pooled_w, pooled_h, spatial_scale, sampling_ratio, aligned, version)
    rows = [(56, 56, 1, 28, 28, 0.5, 0, 0, 0), (28, 28, 3, 14, 14, 0.25, 1, 1, 1), (14, 14, 4, 7, 7, 0.125, 2, 0, 1),
            (14, 14, 8, 7, 7, 0.0625, 3, 1, 0), (7, 7, 12, 3, 3, 0.03125, 4, 0, 0), (7, 7, 16, 3, 3, 0.03125, 4, 1, 1)]
    cases = []
    for i, (w, h, c, pw, ph, s, ratio, aligned, version) in enumerate(rows):
        params = {0: pw, 1: ph, 2: s, 3: ratio, 4: aligned, 5: version}
        box, image_box, past = _rois(name, i, w, h, s)
        cases += [GridCase(params, [], [nc(w, h, c), box]), GridCase(params, [], [nc(w, h, c), image_box])]
        # version 0 samples a bin cut by the far edge past that edge, where ncnn reads the pixel
        # after the row's end (the next row's first ones, or past the map): a bin column and row
        # of every channel have no defined answer to agree with
        stray = c * (pw + ph) if version == 0 else 0
        cases.append(GridCase(params, [], [nc(w, h, c), past], stray=stray))
    return cases


def _whole_edges(lo: float, hi: float, scale: float, pooled: int) -> int:
    """How many bin edges p * roi_size / pooled of one box axis fall on a whole pixel."""
    start, end = (int(np.floor(abs(v * scale) + 0.5) * np.sign(v)) for v in (lo, hi))
    size = max(end - start + 1, 1)
    return sum((p * size) % pooled == 0 for p in range(1, pooled))


@grid("ROIPooling")
def roipooling(name: str) -> list:
    rows = [(112, 112, 16, 56, 56, 0.5), (56, 56, 32, 28, 28, 0.25), (28, 28, 64, 14, 14, 0.125),
            (14, 14, 128, 27, 17, 0.0625), (7, 7, 256, 3, 3, 0.03125)]
    cases = []
    for i, (w, h, c, pw, ph, s) in enumerate(rows):
        for roi in _rois(name, i, w, h, s):
            cases.append(_roipooling_case(w, h, c, pw, ph, s, roi))
    return cases


def _roipooling_case(w: int, h: int, c: int, pw: int, ph: int, s: float, roi: np.ndarray) -> GridCase:
    # the pip wheel of ncnn cuts a bin edge that falls on a whole pixel one pixel off its own
    # source (see tests/layers/test_roialign.py); vkncnn follows the source, so each such edge
    # may shift one column (or row) of bins in every channel
    stray = c * (_whole_edges(roi[0], roi[2], s, pw) * ph + _whole_edges(roi[1], roi[3], s, ph) * pw)
    return GridCase({0: pw, 1: ph, 2: s}, [], [nc(w, h, c), roi], stray=stray)


@grid("Spectrogram")
def spectrogram(name: str) -> list:
    # (size, n_fft, power, hoplen, winlen, window_type, center, pad_type, normalized, onesided)
    rows = [(17, 1, 0, 1, 1, 0, 1, 0, 0, 0), (39, 17, 0, 7, 15, 0, 0, 0, 1, 0), (128, 10, 0, 2, 7, 1, 1, 1, 1, 1),
            (255, 17, 1, 14, 17, 2, 0, 0, 0, 1), (124, 55, 2, 12, 55, 1, 1, 2, 2, 0)]
    cases = [GridCase(dict(enumerate(row[1:])), [], [(row[0],)]) for row in rows]
    # not ncnn's: every power, window, padding, normalisation and sidedness on an even and an
    # odd n_fft, the window shorter than n_fft
    for size, n_fft, hop, win in ((64, 16, 4, 12), (45, 9, 3, 9)):
        for power, window, center, pad, norm, onesided in itertools.product(range(3), range(3), (0, 1), range(3),
                                                                             range(3), (0, 1)):
            if pad and not center:
                continue  # padding applies only to a centred signal
            params = {0: n_fft, 1: power, 2: hop, 3: win, 4: window, 5: center, 6: pad, 7: norm, 8: onesided}
            cases.append(GridCase(params, [], [(size,)]))
    return cases


@grid("InverseSpectrogram")
def inversespectrogram(name: str) -> list:
    # (frames, freqs, n_fft, returns, hoplen, winlen, window_type, center, normalized)
    rows = [(17, 1, 1, 0, 1, 1, 0, 1, 0), (39, 9, 17, 0, 7, 15, 0, 0, 1), (128, 6, 10, 0, 2, 7, 1, 1, 1),
            (255, 17, 17, 1, 14, 17, 2, 0, 0), (124, 28, 55, 2, 12, 55, 1, 1, 2)]
    cases = [GridCase({0: n_fft, 1: returns, 2: hop, 3: win, 4: wtype, 5: center, 7: norm}, [], [nc(2, frames, freqs)])
             for frames, freqs, n_fft, returns, hop, win, wtype, center, norm in rows]
    # not ncnn's: every output kind, window and normalisation, one- and two-sided input
    for frames, n_fft, hop, win in ((13, 16, 4, 12), (11, 9, 3, 9)):
        for freqs in (n_fft // 2 + 1, n_fft):
            for returns, window, center, norm in itertools.product(range(3), range(3), (0, 1), range(3)):
                params = {0: n_fft, 1: returns, 2: hop, 3: win, 4: window, 5: center, 7: norm}
                cases.append(GridCase(params, [], [nc(2, frames, freqs)]))
    return cases


def _priorbox(min_sizes, max_sizes, ratios, flip: int, offset: float) -> dict:
    # variances, then image size and steps -233 (taken from the inputs), no clip, no mmdetection
    return {0: min_sizes, 1: max_sizes, 2: ratios, 3: 0.1, 4: 0.1, 5: 0.2, 6: 0.2, 7: flip, 8: 0, 9: -233, 10: -233,
            11: -233.0, 12: -233.0, 13: offset, 14: 0.0, 15: 0.0}


@grid("PriorBox")
def priorbox(name: str) -> list:
    caffe = _priorbox([105.0], [150.0], [2.0, 3.0], 1, 0.0)
    mxnet = _priorbox([0.15, 0.2121], [], [1.0, 2.0, 0.5, 3.0, 0.333333], 0, 0.5)
    # caffe style: a feature map and the image; mxnet style: the feature map alone, sizes as fractions
    cases = [GridCase(caffe, [], [nc(72, 72, 1), nc(512, 512, 1)]), GridCase(mxnet, [], [nc(72, 72, 1)])]
    # not ncnn's: the switches its test leaves at one value, on maps that are not square. The
    # mmdetection switches are int params (ncnn's test writes 0.f, which reads as int 0 too):
    # ncnn reads a float-written 1.0 as int 0, vkncnn as 1, so they are written as ints here
    feature, image = nc(19, 10, 1), nc(300, 160, 1)
    for change in ({8: 1}, {13: 0.5}, {7: 0}, {9: 320, 10: 200}, {11: 16.0, 12: 15.0}, {14: 1}, {13: 0.5, 15: 1},
                   {1: [], 8: 1, 13: 0.5}):
        cases.append(GridCase({**caffe, **change}, [], [feature, image]))
    for change in ({8: 1}, {11: 0.05, 12: 0.1}, {13: 0.0}):
        cases.append(GridCase({**mxnet, **change}, [], [feature]))
    # an explicit image size: the image blob is not needed
    cases.append(GridCase({**caffe, 9: 300, 10: 160}, [], [feature]))
    return cases


@grid("MemoryData")
def memorydata(name: str) -> list:
    cases = []
    for m in [(5, 7, 3, 16), (3, 5, 4, 13), (5, 7, 16), (3, 5, 13), (6, 16), (7, 15), (128,), (127,)]:
        params = {0: m[0]}
        if len(m) >= 2:
            params[1] = m[1]
        if len(m) == 4:
            params[11] = m[2]
        if len(m) >= 3:
            params[2] = m[-1]
        cases.append(GridCase(params, None, []))
    # not ncnn's: no shape at all gives one value, uninitialised memory in ncnn (vkncnn: 0), so
    # only the shape can agree
    cases.append(GridCase({0: 0}, None, [], edge=True, stray=1))
    return cases


_YOLO = {  # name: (biases, mask, anchors_scale, input (w, h) sizes, confidence_threshold)
    "v3tiny": ([10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319], [3, 4, 5, 1, 2, 3], [32, 16], (13, 26), 0.3),
    "v3": ([10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326], [6, 7, 8, 3, 4, 5, 0, 1, 2],
           [32, 16, 8], (19, 38, 76), 0.6),
    "v4tiny": ([10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319], [3, 4, 5, 1, 2, 3], [33.6, 16.8], (13, 26), 0.4),
    "v4": ([12, 16, 19, 36, 40, 28, 36, 75, 76, 55, 72, 146, 142, 110, 192, 243, 459, 401], [0, 1, 2, 3, 4, 5, 6, 7, 8],
           [9.6, 17.6, 33.6], (76, 38, 19), 0.55),
}


@grid("Yolov3DetectionOutput")
def yolov3detectionoutput(name: str) -> list:
    cases = []
    for i, (biases, mask, scales, sizes, conf) in enumerate(_YOLO.values()):
        # logits mostly far below zero (ncnn's test draws them in [-15, 1.5]): few boxes pass the threshold
        inputs = [_uniform(name, 10 * i + k, nc(s, s, 255), -15.0, 1.5) for k, s in enumerate(sizes)]
        params = {0: 80, 1: 3, 2: conf, 3: 0.45, 4: [float(b) for b in biases], 5: [float(m) for m in mask],
                  6: [float(s) for s in scales]}
        cases.append(GridCase(params, [], inputs))
    # not ncnn's: logits around zero, so most anchors pass the threshold and NMS does the sorting out
    biases, mask, scales, sizes, conf = _YOLO["v3tiny"]
    params = {0: 80, 1: 3, 2: conf, 3: 0.45, 4: [float(b) for b in biases], 5: [float(m) for m in mask],
              6: [float(s) for s in scales]}
    cases.append(GridCase(params, [], [_uniform(name, 100 + k, nc(s, s, 255), -3.0, 3.0) for k, s in enumerate(sizes)]))
    return cases
