"""PriorBox against real ncnn: Caffe style (every param, image size from params or from
bottom 1, mmdetection steps/centres) and MXNet style, on feature maps of every dims."""

import numpy as np
import pytest

import vkncnn
from tests.oracle import check_layer, layer_param_text, run_vkncnn

FEATURES = [(7,), (5, 13), (3, 6, 7), (12, 4, 5), (2, 3, 4, 5), (24, 1, 1)]
IMAGE = np.zeros((3, 60, 75), np.float32)

CAFFE = [
    {0: [30.0]},
    {0: [30.0], 1: [60.0], 2: [2.0]},
    {0: [21.0, 45.0], 1: [45.0, 99.0], 2: [2.0, 3.0], 13: 0.5},
    {0: [21.0, 45.0], 1: [45.0, 99.0], 2: [2.0, 3.0], 7: 0, 8: 1, 13: 0.5},          # no flip, clip
    {0: [40.0], 2: [1.0, 2.0, 0.5], 3: 0.3, 4: 0.4, 5: 0.5, 6: 0.6, 8: 1},          # variances
    {0: [16.0], 1: [32.0], 11: 8.0, 12: 9.0, 13: 0.25},                               # explicit steps
    {0: [16.0], 2: [2.0], 14: 1, 13: 0.5},                                             # mmdetection step
    {0: [16.0], 2: [3.0], 14: 1, 15: 1, 13: 0.5},                                      # + mmdetection centre
    {0: [16.0], 2: [3.0], 15: 1, 11: 10.0, 12: 12.0, 13: 0.5},
    {0: [30], 1: [60], 2: [2]},                                                        # integer arrays
]


@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize("params", CAFFE)
def test_priorbox_caffe_image_size_from_bottom(feature, params):
    check_layer("PriorBox", {9: -233, 10: -233, **params}, [], [np.zeros(feature, np.float32), IMAGE])


@pytest.mark.parametrize("feature", [(5, 13), (3, 6, 7)])
@pytest.mark.parametrize("params", CAFFE[:6])
@pytest.mark.parametrize("n_bottoms", [1, 2])
def test_priorbox_caffe_image_size_from_params(feature, params, n_bottoms):
    inputs = [np.zeros(feature, np.float32), IMAGE][:n_bottoms]
    check_layer("PriorBox", {9: 300, 10: 240, **params}, [], inputs)


@pytest.mark.parametrize("image_params", [{9: -233}, {10: -233}, {}])
def test_priorbox_mixed_or_default_image_size(image_params):
    # the default image size 0 divides by zero: ncnn gives inf/nan boxes, so do we
    check_layer("PriorBox", {0: [20.0], 2: [2.0], 13: 0.5, **image_params}, [],
                [np.zeros((3, 4, 5), np.float32), IMAGE])


@pytest.mark.parametrize("ratios", [[0.0], [-1.0]])
def test_priorbox_degenerate_ratios_give_ncnn_inf_nan(ratios):
    check_layer("PriorBox", {0: [10.0], 2: ratios, 9: 100, 10: 100}, [], [np.zeros((2, 3), np.float32)])


MXNET = [
    {0: [0.2, 0.3], 2: [1.0, 2.0]},
    {0: [0.2, 0.3], 2: [1.0, 2.0, 0.5], 13: 0.5, 8: 1},
    {0: [0.1, 0.2, 0.35], 2: [1.0, 2.0, 0.5], 13: 0.5, 11: 0.1, 12: 0.3},
    {0: [0.2], 2: [1.0, 3.0]},
    {0: [0.2, 0.3, 0.5], 2: [1.0]},
]


@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize("params", MXNET)
def test_priorbox_mxnet(feature, params):
    check_layer("PriorBox", {9: -233, 10: -233, **params}, [], [np.zeros(feature, np.float32)])


@pytest.mark.parametrize("params", [{}, {1: [20.0]}, {0: [10.0], 1: [20.0, 30.0]}, {0: [10.0, 12.0], 1: [20.0]}])
def test_priorbox_bad_sizes_rejected_like_ncnn(params):
    text = layer_param_text("PriorBox", {9: -233, 10: -233, **params}, 2)
    with pytest.raises(vkncnn.ParamError):
        run_vkncnn(text, b"", {"in0": np.zeros((3, 4, 5), np.float32), "in1": IMAGE}, ["out0"])


@pytest.mark.parametrize("params,error", [
    # caffe style needs bottom 1 for the image size (ncnn reads past its bottom list)
    ({0: [10.0], 1: [20.0], 9: -233, 10: -233}, vkncnn.ShapeError),
    # mxnet style without ratios: ncnn fails (one size) or overruns its output (more sizes)
    ({0: [10.0], 9: -233, 10: -233}, vkncnn.ParamError),
    ({0: [0.2, 0.3, 0.5], 9: -233, 10: -233}, vkncnn.ParamError),
])
def test_priorbox_unrunnable_configurations_raise(params, error):
    with pytest.raises(error):
        run_vkncnn(layer_param_text("PriorBox", params, 1), b"", {"in0": np.zeros((3, 4, 5), np.float32)}, ["out0"])
