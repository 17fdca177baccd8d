"""DeconvolutionDepthWise3D against real ncnn: depthwise and grouped transposed volumetric
convolutions over strides, dilations, pads, output_pad and output size, activations,
errors and a GPU net."""

import pytest

from tests.layers.conv3d_cases import params3d, weights3d
from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import ParamError, ShapeError

TYPE = "DeconvolutionDepthWise3D"


@pytest.mark.parametrize("inc,outc,group", [(1, 1, 1), (3, 3, 3), (4, 8, 4), (8, 8, 8), (12, 12, 12),
                                            (4, 6, 2), (12, 8, 4)])
@pytest.mark.parametrize("kernel,extra", [((3, 3, 3), {3: 2, 4: 1}), ((2, 3, 1), {3: 2, 23: 1, 2: 2, 18: 1}),
                                          ((3, 3, 3), {4: -233, 3: 2, 25: 8, 26: 7, 27: 5}),
                                          ((1, 3, 2), {4: 0, 15: 1, 14: 1, 16: 0, 24: 0, 17: 0})])
def test_groups_kernels_pads(inc, outc, group, kernel, extra):
    check_layer(TYPE, params3d(outc, inc, kernel, group, extra=extra), weights3d(outc, inc, kernel, group),
                [rand(inc, 3, 4, 5)])


@pytest.mark.parametrize("act,act_params", [(1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None),
                                            (6, [0.2, 0.5])])
def test_activation(act, act_params):
    extra = {3: 2, 9: act, **({10: act_params} if act_params else {})}
    check_layer(TYPE, params3d(6, 6, (3, 3, 3), 6, bias=False, extra=extra),
                weights3d(6, 6, (3, 3, 3), 6, bias=False), [rand(6, 3, 4, 5)])


def test_bad_group_raises():
    text = layer_param_text(TYPE, {0: 6, 1: 3, 6: 6 * 27, 7: 4}, 1)
    with pytest.raises(ParamError):
        run_vkncnn(text, b"", {"in0": rand(4, 3, 4, 5)}, ["out0"])


def test_bad_channels_raise():
    text = layer_param_text(TYPE, params3d(6, 6, (3, 3, 3), 6), 1)
    with pytest.raises(ShapeError):
        run_vkncnn(text, bin_bytes(weights3d(6, 6, (3, 3, 3), 6)), {"in0": rand(4, 3, 4, 5)}, ["out0"])


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, params3d(12, 12, (3, 3, 3), 12, extra={3: 2, 4: 1}), weights3d(12, 12, (3, 3, 3), 12),
                     [rand(12, 3, 4, 5)])
