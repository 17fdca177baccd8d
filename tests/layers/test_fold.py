"""Fold (col2im) against real ncnn: kernels, strides, dilations per axis, pads, output
sizes, overlapping windows summed, Unfold round trip, errors and a GPU net."""

import numpy as np
import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError

# (params, kernel (kh, kw), blocks (bh, bw))
CASES = [
    ({1: 3, 20: 8, 21: 7}, (3, 3), (5, 6)),
    ({1: 3, 3: 2, 20: 9, 21: 7, 4: 1}, (3, 3), (4, 5)),
    ({1: 2, 11: 3, 2: 2, 12: 1, 3: 1, 13: 2, 20: 8, 21: 9, 4: 0, 15: 1, 14: 2, 16: 0}, (3, 2), (5, 7)),
    ({1: 1, 20: 5, 21: 4}, (1, 1), (4, 5)),
    ({1: 4, 3: 4, 20: 8}, (4, 4), (2, 2)),
    ({1: 3, 2: 2, 3: 1, 20: 10, 21: 6, 4: 2}, (3, 3), (6, 10)),
]


@pytest.mark.parametrize("params,kernel,blocks_hw", CASES)
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_windows(params, kernel, blocks_hw, channels):
    check_layer("Fold", params, [], [rand(channels * kernel[0] * kernel[1], blocks_hw[0] * blocks_hw[1])])


def test_unfold_then_fold_counts_overlaps():
    # fold(unfold(x)) = x times the number of windows covering each pixel
    text = ("7767517\n3 3\nInput in0 0 1 in0\nUnfold u 1 1 in0 c 1=3 3=1 4=1\n"
            "Fold f 1 1 c out0 1=3 3=1 4=1 20=6 21=5\n")
    x = rand(2, 5, 6)
    y = run_vkncnn(text, b"", {"in0": x}, ["out0"])["out0"]
    ones = run_vkncnn(text, b"", {"in0": np.ones_like(x)}, ["out0"])["out0"]
    assert np.allclose(y, x * ones, atol=1e-5)
    assert ones[0, 2, 2] == 9 and ones[0, 0, 0] == 4


@pytest.mark.parametrize("shape", [(27, 29), (26, 30), (3, 27, 30)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Fold", {1: 3, 20: 8, 21: 7}, 1), b"", {"in0": rand(*shape)}, ["out0"])


@pytest.mark.parametrize("params", [{1: 3}, {1: 3, 20: 2}, {1: 3, 20: 8, 4: -233}, {1: 0, 20: 8}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        run_vkncnn(layer_param_text("Fold", params, 1), b"", {"in0": rand(27, 30)}, ["out0"])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net("Fold", {1: 3, 3: 2, 20: 9, 21: 7, 4: 1}, [], [rand(36, 20)])
