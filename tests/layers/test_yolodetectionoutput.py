"""YoloDetectionOutput (YOLOv2 region) against real ncnn: detections over one or more
bottoms, the in-place outputs (softmaxed bottoms; bottom 0 itself when nothing is found),
tied scores, 4-D blobs and the params ncnn refuses."""

import numpy as np
import pytest

import vkncnn
from tests.layers.test_detectionoutput import assert_both_reject, compare_with_ncnn

VOC_BIASES = [1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52]
SMALL_BIASES = [1.0, 1.5, 2.0, 0.7, 0.6, 2.2]


def region(num_box, num_class, h, w, seed, extra_channels=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-3, 3, (num_box * (5 + num_class) + extra_channels, h, w)).astype(np.float32)


@pytest.mark.parametrize("num_box,num_class,h,w", [(5, 20, 13, 13), (2, 3, 3, 4), (3, 1, 5, 7), (1, 8, 6, 6)])
@pytest.mark.parametrize("thresholds", [{2: 0.3}, {2: 0.4, 3: 0.3}, {2: 0.05, 3: 0.6}, {}])
def test_yolo_matches_ncnn(num_box, num_class, h, w, thresholds):
    biases = VOC_BIASES if num_box == 5 else SMALL_BIASES
    params = {0: num_class, 1: num_box, 4: biases, **thresholds}
    out = compare_with_ncnn("YoloDetectionOutput", params, [region(num_box, num_class, h, w, seed=h * w)])
    assert out[0].ndim == 2 and len(out[0]) > 0


def test_yolo_default_params():
    # num_class 20, num_box 5, confidence 0.01, nms 0.45
    compare_with_ncnn("YoloDetectionOutput", {4: VOC_BIASES}, [region(5, 20, 7, 9, seed=2)])


def test_yolo_extra_trailing_channels_are_ignored():
    params = {0: 3, 1: 2, 2: 0.3, 4: SMALL_BIASES}
    compare_with_ncnn("YoloDetectionOutput", params, [region(2, 3, 4, 5, seed=1, extra_channels=1)])


@pytest.mark.parametrize("n_outputs", [1, 2])
@pytest.mark.parametrize("threshold", [0.3, 0.999])
def test_yolo_two_bottoms_and_in_place_outputs(n_outputs, threshold):
    """Top 0 is the detections (or bottom 0 softmaxed if none), top 1 bottom 1 softmaxed."""
    params = {0: 3, 1: 2, 2: threshold, 4: SMALL_BIASES}
    inputs = [region(2, 3, 3, 4, seed=5), region(2, 3, 5, 2, seed=6, extra_channels=1)]
    out = compare_with_ncnn("YoloDetectionOutput", params, inputs, n_outputs=n_outputs)
    if threshold > 0.99:
        assert out[0].shape == inputs[0].shape
    if n_outputs == 2:
        assert out[1].shape == inputs[1].shape


def test_yolo_nothing_detected_returns_softmaxed_bottom():
    blob = region(5, 20, 13, 13, seed=9)
    out = compare_with_ncnn("YoloDetectionOutput", {2: 0.9999, 4: VOC_BIASES}, [blob])
    probs = out[0].reshape(5, 25, 13, 13)[:, 5:]
    assert np.allclose(probs.sum(axis=1), 1, atol=1e-5)
    assert np.array_equal(out[0].reshape(5, 25, 13, 13)[:, :5], blob.reshape(5, 25, 13, 13)[:, :5])


def tied_region(num_box, num_class, h, w, seed):
    """Box offsets vary everywhere; objectness and class logits come from a few prototypes,
    so distinct boxes share exact scores. h*w is a multiple of 16 so ncnn's vectorised
    softmax treats every cell alike."""
    rng = np.random.default_rng(seed)
    blob = rng.uniform(-2, 2, (num_box, 5 + num_class, h, w)).astype(np.float32)
    blob[:, 4] = rng.choice(np.float32([-0.5, 0.5, 1.5]), (num_box, h, w))
    prototypes = rng.uniform(-2, 3, (3, num_class)).astype(np.float32)
    blob[:, 5:] = np.moveaxis(prototypes[rng.integers(0, 3, (num_box, h, w))], -1, 1)
    return blob.reshape(-1, h, w)


@pytest.mark.parametrize("nms", [0.2, 0.45, 0.7])
@pytest.mark.parametrize("seed", [0, 1])
def test_yolo_tied_scores_keep_ncnn_order(nms, seed):
    params = {0: 3, 1: 2, 2: 0.1, 3: nms, 4: SMALL_BIASES}
    out = compare_with_ncnn("YoloDetectionOutput", params, [tied_region(2, 3, 8, 8, seed)])
    assert len(np.unique(out[0][:, 1])) < len(out[0]), "test meant to have tied scores"


@pytest.mark.parametrize("threshold", [0.3, 0.999])
def test_yolo_4d_blob(threshold):
    # detections come from depth slice 0; the in-place output softmaxes every slice
    blob = np.ascontiguousarray(np.stack([region(2, 3, 4, 4, seed=3), region(2, 3, 4, 4, seed=4)], axis=1))
    compare_with_ncnn("YoloDetectionOutput", {0: 3, 1: 2, 2: threshold, 4: SMALL_BIASES}, [blob])


@pytest.mark.parametrize("params", [
    {0: 0, 1: 2, 4: SMALL_BIASES}, {0: 3, 1: 0, 4: SMALL_BIASES}, {0: 3, 1: 2},
    {0: 3, 1: 2, 4: [1.0, 1.5]}, {4: [1.0, 1.5, 2.0, 0.7]},
])
def test_yolo_rejects_params_like_ncnn(params):
    assert_both_reject("YoloDetectionOutput", params, [region(2, 3, 3, 4, seed=0)], vkncnn.ParamError)


@pytest.mark.parametrize("shape", [(15, 3, 4), (12, 7)])
def test_yolo_rejects_wrong_channel_count_like_ncnn(shape):
    assert_both_reject("YoloDetectionOutput", {0: 3, 1: 2, 4: SMALL_BIASES},
                       [np.zeros(shape, np.float32)], vkncnn.ShapeError)


def test_yolo_empty_boxes_suppress_like_ncnn():
    # 16 cells: ncnn's vectorised softmax treats them alike, so all scores tie exactly
    blob = np.zeros((6, 4, 4), np.float32)
    blob[0] = np.arange(16, dtype=np.float32).reshape(4, 4)
    blob[2], blob[4], blob[5] = -200.0, 3.0, 1.0  # zero-width boxes, all confident
    out = compare_with_ncnn("YoloDetectionOutput", {0: 1, 1: 1, 2: 0.1, 4: [1.0, 1.0]}, [blob])
    assert len(out[0]) == 1
