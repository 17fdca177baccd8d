"""Yolov3DetectionOutput against real ncnn: YOLOv3/v4(-tiny) head configurations, masks
written as floats or as ncnn's integer bit patterns, tied scores, empty results, and the
load-time checks ncnn applies."""

import numpy as np
import pytest

import vkncnn
from tests.layers.test_detectionoutput import assert_both_reject, compare_with_ncnn
from tests.oracle import layer_param_text, run_vkncnn

V3_BIASES = [10.0, 13.0, 16.0, 30.0, 33.0, 23.0, 30.0, 61.0, 62.0, 45.0, 59.0, 119.0, 116.0, 90.0, 156.0,
             198.0, 373.0, 326.0]
TINY_BIASES = [10.0, 14.0, 23.0, 27.0, 37.0, 58.0, 81.0, 82.0, 135.0, 169.0, 344.0, 319.0]


def float_bits(values) -> list[int]:
    """Floats as the int32 bit patterns ncnn's model writer stores in int-typed arrays."""
    return [int(v) for v in np.asarray(values, np.float32).view(np.int32)]


def heads(shapes, num_box, num_class, seed, lo=-4.0, hi=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, (num_box * (5 + num_class), h, w)).astype(np.float32) for h, w in shapes]


CONFIGS = {
    # name: (num_class, num_box, biases, mask, anchors_scale, feature shapes)
    "v3tiny": (80, 3, TINY_BIASES, [3.0, 4.0, 5.0, 1.0, 2.0, 3.0], [32.0, 16.0], [(5, 5), (10, 10)]),
    "v3": (80, 3, V3_BIASES, [6.0, 7.0, 8.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0], [32.0, 16.0, 8.0],
           [(3, 4), (6, 8), (12, 16)]),
    "v4tiny": (3, 3, TINY_BIASES, [3.0, 4.0, 5.0, 1.0, 2.0, 3.0], [33.6, 16.8], [(7, 9), (14, 18)]),
    "single": (4, 2, TINY_BIASES, [5.0, 0.0], [12.5], [(9, 7)]),
    "one_class": (1, 1, TINY_BIASES, [2.0], [8.0], [(8, 8)]),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("thresholds", [{2: 0.3}, {2: 0.5, 3: 0.3}, {2: 0.05, 3: 0.6}, {}])
def test_yolov3_matches_ncnn(name, thresholds):
    num_class, num_box, biases, mask, scales, shapes = CONFIGS[name]
    params = {0: num_class, 1: num_box, 4: biases, 5: mask, 6: scales, **thresholds}
    out = compare_with_ncnn("Yolov3DetectionOutput", params, heads(shapes, num_box, num_class, seed=len(name)))
    assert out[0].ndim == 2 and len(out[0]) > 0


def test_yolov3_ncnn_test_suite_inputs():
    # ncnn's own test draws from [-15, 1.5]: few boxes survive, most scores are tiny
    num_class, num_box, biases, mask, scales, _ = CONFIGS["v3tiny"]
    params = {0: num_class, 1: num_box, 2: 0.3, 4: biases, 5: mask, 6: scales}
    blobs = heads([(13, 13), (26, 26)], num_box, num_class, seed=7, lo=-15, hi=1.5)
    compare_with_ncnn("Yolov3DetectionOutput", params, blobs)


@pytest.mark.parametrize("mask", [[3.0, 4.0, 5.0, 1.0, 2.0, 3.0], float_bits([3, 4, 5, 1, 2, 3])])
@pytest.mark.parametrize("integer_arrays", [False, True])
def test_yolov3_mask_as_floats_or_int_bit_patterns(mask, integer_arrays):
    # real .param files (yolov4-tiny, yolo-fastest) carry the mask as int bit patterns;
    # biases and scales written as plain integers are read by value
    biases = [int(b) for b in TINY_BIASES] if integer_arrays else TINY_BIASES
    scales = [32, 16] if integer_arrays else [32.0, 16.0]
    params = {0: 2, 1: 3, 2: 0.3, 4: biases, 5: mask, 6: scales}
    out = compare_with_ncnn("Yolov3DetectionOutput", params, heads([(4, 5), (8, 10)], 3, 2, seed=3))
    assert len(out[0])


def tied_heads(num_box, num_class, h, w, seed):
    """Boxes vary everywhere, but objectness and class logits come from a few prototypes,
    so many different boxes share one score exactly: ncnn's quicksort decides their order."""
    rng = np.random.default_rng(seed)
    blob = rng.uniform(-2, 2, (num_box, 5 + num_class, h, w)).astype(np.float32)
    blob[:, 4] = rng.choice(np.float32([-0.5, 0.5, 1.5]), (num_box, h, w))
    prototypes = rng.uniform(-2, 3, (4, num_class)).astype(np.float32)
    pick = rng.integers(0, len(prototypes), (num_box, h, w))
    blob[:, 5:] = np.moveaxis(prototypes[pick], -1, 1)
    return blob.reshape(-1, h, w)


@pytest.mark.parametrize("nms", [0.2, 0.45, 0.7])
@pytest.mark.parametrize("seed", [0, 1])
def test_yolov3_tied_scores_keep_ncnn_order(nms, seed):
    params = {0: 3, 1: 2, 2: 0.2, 3: nms, 4: TINY_BIASES, 5: [1.0, 4.0], 6: [16.0]}
    out = compare_with_ncnn("Yolov3DetectionOutput", params, [tied_heads(2, 3, 9, 11, seed)])
    assert len(np.unique(out[0][:, 1])) < len(out[0]), "test meant to have tied scores"


def test_yolov3_4d_blob_reads_first_depth_slice():
    params = {0: 2, 1: 1, 2: 0.2, 4: TINY_BIASES, 5: [2.0], 6: [8.0]}
    blob = heads([(6, 5)], 1, 2, seed=4)[0]
    blob4 = np.stack([blob, blob[:, ::-1]], axis=1)  # (c, d=2, h, w)
    compare_with_ncnn("Yolov3DetectionOutput", params, [np.ascontiguousarray(blob4)])


@pytest.mark.parametrize("threshold", [0.999, 1.5])
def test_yolov3_nothing_detected_is_empty(threshold):
    num_class, num_box, biases, mask, scales, shapes = CONFIGS["v4tiny"]
    params = {0: num_class, 1: num_box, 2: threshold, 4: biases, 5: mask, 6: scales}
    out = compare_with_ncnn("Yolov3DetectionOutput", params, heads(shapes, num_box, num_class, seed=1))
    assert out[0].size == 0


BASE = {0: 2, 1: 1, 2: 0.3, 4: TINY_BIASES, 5: [1.0], 6: [32.0]}


@pytest.mark.parametrize("change", [
    {0: 0}, {1: 0}, {4: []}, {5: []}, {6: []},
    {5: [6.0]},                      # anchor index past the biases
    {5: [0.5]}, {5: [-1.0]},         # not a whole index
    {5: [3]},                        # int 3 is read by its bits: a denormal, not 3
    {5: [1.0, 2.0]},                 # two scales of masks, one anchors_scale
    {1: 2, 5: [1.0, 2.0, 3.0]},      # mask not a multiple of num_box
    {4: [10.0, 0.0, 5.0, 5.0], 5: [0.0]},   # a used anchor of size 0
    {6: [0.0]}, {6: [-32.0]}, {6: [2147483648.0]},
])
def test_yolov3_rejects_params_like_ncnn(change):
    blob = heads([(4, 4)], 1, 2, seed=0)[0]
    assert_both_reject("Yolov3DetectionOutput", {**BASE, **change}, [blob])


def test_yolov3_unused_anchor_may_be_anything():
    params = {**BASE, 4: [0.0, -1.0, 20.0, 30.0], 5: [1.0]}
    compare_with_ncnn("Yolov3DetectionOutput", params, heads([(4, 4)], 1, 2, seed=0))


@pytest.mark.parametrize("blob_shape", [(8, 4, 4), (7, 16), (6, 4, 4)])
def test_yolov3_rejects_wrong_channel_count_like_ncnn(blob_shape):
    assert_both_reject("Yolov3DetectionOutput", BASE, [np.zeros(blob_shape, np.float32)], vkncnn.ShapeError)


def test_yolov3_more_bottoms_than_scales_is_an_error():
    # ncnn reads mask and anchors_scale past their ends here; we refuse
    blob = heads([(4, 4)], 1, 2, seed=0)[0]
    with pytest.raises(vkncnn.ShapeError):
        run_vkncnn(layer_param_text("Yolov3DetectionOutput", BASE, 2), b"", {"in0": blob, "in1": blob}, ["out0"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_yolov3_many_candidates_sort_like_ncnn(seed):
    """Thousands of low-threshold candidates put some scores one float apart: the order
    only matches if every score is rounded exactly as ncnn rounds it."""
    params = {0: 20, 1: 3, 2: 0.01, 3: 0.45, 4: V3_BIASES, 5: [6.0, 7.0, 8.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0],
              6: [32.0, 16.0, 8.0]}
    blobs = heads([(7, 9), (14, 18), (28, 36)], 3, 20, seed=seed, lo=-3, hi=3)
    out = compare_with_ncnn("Yolov3DetectionOutput", params, blobs)
    assert len(out[0]) > 1000


@pytest.mark.parametrize("tw,th", [(-200.0, 0.0), (100.0, 0.0), (100.0, 100.0), (-200.0, -200.0), (88.0, 1.0)])
def test_yolov3_degenerate_boxes_like_ncnn(tw, th):
    """Empty, infinite and overflowing boxes: ncnn's YOLOv3 NMS keeps NaN overlaps, and it
    folds bias / net_w before multiplying by exp(tw), which keeps exp(88) * 7 / 24 finite."""
    blob = np.zeros((6, 2, 3), np.float32)
    blob[0] = np.arange(6, dtype=np.float32).reshape(2, 3)
    blob[2], blob[3], blob[4], blob[5] = tw, th, 3.0, 1.0
    params = {0: 1, 1: 1, 2: 0.1, 4: [7.0, 1.0], 5: [0.0], 6: [8.0]}
    out = compare_with_ncnn("Yolov3DetectionOutput", params, [blob])
    assert len(out[0]) > 0
