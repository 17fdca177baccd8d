"""The fast numpy convolution paths against real ncnn: Winograd F(2,3)/F(4,3) (3x3
stride 1, >= 32 channels each side), padded 1x1, depthwise (planar input here; the
channels-last input is tests/test_channels_last.py), channel multiplier depthwise,
with pads, SAME modes, pad_value, bias and activations."""

import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw, tagged

ACTS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (6, [0.2, 0.5])]


def conv_case(inc, outc, h, w, pads, act, group=1, kernel=3, stride=1, dilation=1, pad_value=0.0, seed=0,
              bias=True):
    t = "Convolution" if group == 1 else "ConvolutionDepthWise"
    params = {0: outc, 1: kernel, 3: stride, 2: dilation, 5: int(bias), 6: outc * inc // group * kernel * kernel,
              18: pad_value, **pads}
    if group > 1:
        params[7] = group
    if act[0]:
        params[9] = act[0]
        if act[1]:
            params[10] = act[1]
    weights = [tagged(rand(outc, inc // group, kernel, kernel, seed=seed) / np.sqrt(inc // group * 9))]
    if bias:
        weights.append(raw(rand(outc, seed=seed + 1)))
    return check_layer(t, params, weights, [rand(inc, h, w, seed=seed + 2)])


@pytest.mark.parametrize("inc,outc,h,w", [(32, 32, 28, 28), (48, 40, 29, 31), (32, 64, 14, 14), (40, 33, 15, 17),
                                          (64, 32, 30, 27), (32, 48, 7, 7), (33, 35, 56, 12),
                                          # rows of >= 14 tiles: stored one block position at a time
                                          (32, 36, 28, 56), (36, 32, 29, 61)])
@pytest.mark.parametrize("pads", [{4: 1}, {}, {4: -233}, {4: -234}, {4: 2, 15: 0, 14: 1, 16: 3}])
def test_winograd_sizes(inc, outc, h, w, pads):
    conv_case(inc, outc, h, w, pads, (1, None), pad_value=0.0)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("pad_value", [0.0, 0.7])
def test_winograd_act(act, pad_value):
    """The activation applied in the scatter, the bias added at the all-ones frequency:
    F(4,3), F(2,3) (14x14, >= 144 input channels), with and without a bias."""
    conv_case(32, 36, 30, 29, {4: 1}, act, pad_value=pad_value)
    conv_case(36, 32, 16, 15, {4: 1}, act, pad_value=pad_value)
    conv_case(160, 40, 14, 15, {4: 1}, act, pad_value=pad_value)
    conv_case(32, 36, 28, 28, {4: 1}, act, pad_value=pad_value, bias=False)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("pads,pad_value", [({4: 1}, 0.0), ({4: 2, 15: 0, 14: 1, 16: 3}, 0.7), ({4: -233}, 0.0)])
def test_pointwise_padded(act, pads, pad_value):
    """A padded 1x1 convolution: the product on the unpadded input, the border filled."""
    conv_case(40, 24, 9, 11, pads, act, kernel=1, pad_value=pad_value)


@pytest.mark.parametrize("c,h,w", [(3, 9, 11), (16, 57, 55), (200, 14, 13), (24, 8, 8), (640, 7, 7), (12, 33, 29)])
@pytest.mark.parametrize("kernel,stride,dilation",
                         [(3, 1, 1), (3, 2, 1), (5, 1, 1), (5, 2, 1), (3, 1, 2), (2, 3, 1), (1, 1, 1),
                          (3, 2, 2), (4, 3, 2)])  # the last two: column phases sharing taps, spread apart
@pytest.mark.parametrize("pads", [{4: 1}, {4: -233}, {4: -234}, {4: 1, 15: 0, 14: 2, 16: 1}])
def test_depthwise(c, h, w, kernel, stride, dilation, pads):
    if kernel < stride and pads.get(4, 0) < 0:
        pytest.skip("ncnn corrupts memory on SAME padding with kernel < stride")
    conv_case(c, c, h, w, pads, (3, [0.0, 6.0]), group=c, kernel=kernel, stride=stride, dilation=dilation,
              pad_value=0.3)


@pytest.mark.parametrize("c,mult,h", [(4, 2, 9), (8, 3, 30), (64, 2, 7)])
def test_depthwise_multiplier(c, mult, h):
    conv_case(c, c * mult, h, h + 1, {4: 1}, (1, None), group=c, kernel=3, stride=1)


@pytest.mark.parametrize("inc,h,w,kernel,stride,pads", [(3, 31, 29, 7, 2, {4: 3}), (3, 30, 33, 7, 2, {4: -233}),
                                                       (4, 35, 36, 11, 4, {}), (5, 26, 27, 7, 3, {4: 1}),
                                                       (8, 20, 21, 8, 2, {4: 2, 15: 0, 14: 1, 16: 3})])
def test_large_kernel_strided(inc, h, w, kernel, stride, pads):
    """Kernels from 7x7 with a stride: im2col by the stride's phases (conv.im2col_phases)."""
    conv_case(inc, 16, h, w, pads, (1, None), kernel=kernel, stride=stride, pad_value=0.4)


@pytest.mark.parametrize("inc,outc,h,w,kernel,dilation,pads",
                         [(64, 48, 7, 7, 3, 1, {4: 1}), (40, 24, 14, 13, 5, 1, {4: 2}), (16, 20, 30, 31, 3, 1, {}),
                          (24, 16, 12, 11, 3, 2, {4: 2, 15: 0, 14: 1, 16: 3}), (8, 12, 9, 10, 2, 1, {4: -233})])
def test_im2col_rows(inc, outc, h, w, kernel, dilation, pads):
    """Stride-1 kernels on planes up to 32 wide: im2col in two row copies (conv.im2col_rows)."""
    conv_case(inc, outc, h, w, pads, (1, None), kernel=kernel, dilation=dilation, pad_value=0.3)
