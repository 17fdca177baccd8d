import itertools

import numpy as np
import pytest

import vkncnn
from tests.oracle import check_layer, rand
from vkncnn.cpu_fallback import pooling

SHAPES = [(1, 7, 9), (3, 8, 8), (4, 11, 6), (8, 5, 13), (12, 6, 7), (16, 3, 3)]
WINDOWS = [  # kernel_w, kernel_h, stride_w, stride_h
    (2, 2, 2, 2), (3, 3, 2, 2), (3, 3, 1, 1), (3, 2, 2, 1), (1, 1, 2, 2), (5, 3, 3, 2),
]
PADS = [(0, 0, 0, 0), (1, 1, 1, 1), (1, 0, 2, 1), (0, 2, 0, 1)]  # left, right, top, bottom


@pytest.mark.parametrize("pooling_type", [0, 1])
@pytest.mark.parametrize("pad_mode", [0, 1, 2, 3])
@pytest.mark.parametrize("include_pad", [0, 1])
def test_window_pooling_matches_ncnn(pooling_type, pad_mode, include_pad):
    for (kw, kh, sw, sh), (pl, pr, pt, pb), shape in itertools.product(WINDOWS, PADS, SHAPES):
        if pad_mode == 1 and (shape[1] + pt + pb < kh or shape[2] + pl + pr < kw):
            continue  # no window fits: ncnn makes a negative-sized blob
        if max(pl, pr) >= kw or max(pt, pb) >= kh:
            continue  # a window wholly in padding: ncnn divides by zero area
        params = {0: pooling_type, 1: kw, 11: kh, 2: sw, 12: sh, 3: pl, 14: pr, 13: pt, 15: pb,
                  5: pad_mode, 6: include_pad}
        check_layer("Pooling", params, [], [rand(*shape, seed=sum(shape))])


@pytest.mark.parametrize("pooling_type", [0, 1])
@pytest.mark.parametrize("shape", [(7,), (5, 9), (1, 4, 4), (3, 6, 7), (24, 5, 3)])
def test_global_pooling_matches_ncnn(pooling_type, shape):
    check_layer("Pooling", {0: pooling_type, 4: 1}, [], [rand(*shape)])


@pytest.mark.parametrize("pooling_type", [0, 1])
def test_global_pooling_of_channels_last_input(pooling_type):
    """A depthwise result arrives channels-last (a transposed view): same answer as planar."""
    planar = np.ascontiguousarray(rand(72, 28, 28))
    channels_last = np.ascontiguousarray(planar.transpose(1, 2, 0)).transpose(2, 0, 1)
    np.testing.assert_allclose(pooling.global_pool(channels_last, pooling_type),
                               pooling.global_pool(planar, pooling_type), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pooling_type", [0, 1])
@pytest.mark.parametrize("out_hw", [(1, 1), (2, 3), (3, 3), (4, 2), (7, 5), (6, 9)])
def test_adaptive_pooling_matches_ncnn(pooling_type, out_hw):
    out_h, out_w = out_hw
    for shape in [(3, 7, 9), (4, 6, 6), (1, 13, 5), (2, 9)]:
        check_layer("Pooling", {0: pooling_type, 7: 1, 8: out_w, 18: out_h}, [], [rand(*shape)])
    check_layer("Pooling", {0: pooling_type, 7: 1, 8: out_w}, [], [rand(3, 8, 9)])  # out_h = out_w


@pytest.mark.parametrize("pooling_type", [0, 1])
def test_two_dim_input_pools_as_one_channel(pooling_type):
    check_layer("Pooling", {0: pooling_type, 1: 3, 2: 2}, [], [rand(7, 10)])
    check_layer("Pooling", {0: pooling_type, 1: 2, 2: 1, 3: 1, 5: 1}, [], [rand(5, 6)])


def test_caffe_defaults_squeezenet_pool():
    # pool1 of squeezenet: 0=0 1=3 2=2 3=0 4=0, full padding on an even-ish input
    check_layer("Pooling", {0: 0, 1: 3, 2: 2, 3: 0, 4: 0}, [], [rand(8, 113, 113)])
    check_layer("Pooling", {0: 1, 1: 3, 2: 2}, [], [rand(4, 14, 14)])


def test_bad_shapes_raise():
    net = _one_layer("Pooling", "0=0 1=3 2=1 5=1")
    with pytest.raises(vkncnn.Error):
        _run(net, rand(2, 2, 2))        # window larger than the valid-padded input
    with pytest.raises(vkncnn.Error):
        _run(net, rand(9))              # 1-D input without global pooling


def _one_layer(type_name, params):
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(f"7767517\n2 2\nInput in0 0 1 in0\n{type_name} op 1 1 in0 out0 {params}\n")
    net.load_model(b"")
    return net


def _run(net, x):
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(x))
        return ex.extract("out0")[1].numpy()


@pytest.mark.parametrize("params", [{0: 0, 1: 3, 2: 2}, {0: 1, 1: 2, 2: 2, 3: 1}, {0: 1, 4: 1}, {0: 0, 7: 1, 8: 2}])
@pytest.mark.parametrize("c", [2, 4, 8])
def test_four_dim_input_pools_first_depth_slice_like_ncnn(params, c):
    check_layer("Pooling", params, [], [rand(c, 3, 7, 9)])


@pytest.mark.parametrize("pad_mode", [2, 3])
@pytest.mark.parametrize("pooling_type", [0, 1])
@pytest.mark.parametrize("gpu", [False, True])
def test_same_crops_bottom_rows_when_width_pads(pad_mode, pooling_type, gpu):
    """SAME with a 1x4 window, stride 3x2: w pads while h's amount is negative; ncnn crops
    all of h's off the bottom rows (found by tools/dev/layerfuzz)."""
    params = {0: pooling_type, 1: 4, 11: 1, 2: 2, 12: 3, 5: pad_mode}
    check_layer("Pooling", params, [], [rand(3, 9, 8)], gpu=gpu)


@pytest.mark.parametrize("pad_mode", [2, 3])
@pytest.mark.parametrize("pooling_type", [0, 1])
@pytest.mark.parametrize("gpu", [False, True])
def test_same_crops_width_when_height_pads(pad_mode, pooling_type, gpu):
    """SAME with a 7x3 window, stride 4x6 on 16x11: h pads (3) while w's amount is negative
    (-1), split as the pads are: SAME_LOWER crops a column in front. Rows of 12+ pixels or
    packed channels are where ncnn's copy writes outside its rows instead
    (tools/dev/layerfuzz/known.py: _negative_border_bug), so this stays at 3 channels of 11."""
    params = {0: pooling_type, 1: 3, 2: 6, 11: 7, 12: 4, 5: pad_mode, 6: 1}
    check_layer("Pooling", params, [], [rand(3, 16, 11)], gpu=gpu)
