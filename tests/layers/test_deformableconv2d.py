"""DeformableConv2D against real ncnn: with and without mask (DCNv2 / v1), kernels,
strides, dilations, pads, offsets reaching outside the input, bias, activations, offset
groups (checked against ncnn run per group), errors and a GPU net."""

import numpy as np
import pytest

from tests.layers.gpu_net import check_in_gpu_net, needs_gpu
from tests.oracle import bin_bytes, check_layer, layer_param_text, rand, raw, run_ncnn, run_vkncnn, tagged
from vkncnn.errors import ParamError, ShapeError

TYPE = "DeformableConv2D"


def dc_params(outc, inc, kh, kw, bias=True, extra=None):
    return {0: outc, 1: kw, 11: kh, 5: int(bias), 6: outc * inc * kh * kw, **(extra or {})}


def dc_weight(outc, inc, kh, kw):
    return rand(outc, inc, kh, kw, seed=3)


def dc_inputs(inc, hw, out_hw, taps, mask=True, groups=1, spread=2.0):
    ins = [rand(inc, *hw), rand(2 * taps * groups, *out_hw, seed=5, lo=-spread, hi=spread)]
    return ins + [rand(taps * groups, *out_hw, seed=6, lo=0, hi=1)] if mask else ins


# (outc, inc, kh, kw, extra params, input hw, output hw)
CASES = [
    (4, 3, 3, 3, {}, (7, 8), (5, 6)),
    (4, 3, 3, 3, {4: 1}, (7, 8), (7, 8)),
    (8, 4, 1, 1, {}, (6, 5), (6, 5)),
    (5, 4, 3, 2, {3: 2, 13: 1, 2: 1, 12: 2, 4: 1, 15: 0, 14: 2, 16: 1}, (7, 8), (6, 4)),
    (3, 1, 2, 2, {3: 2, 4: 0}, (9, 9), (4, 4)),
    (12, 8, 3, 3, {2: 2, 4: 2}, (6, 7), (6, 7)),
]


@pytest.mark.parametrize("outc,inc,kh,kw,extra,hw,out_hw", CASES)
@pytest.mark.parametrize("mask", [True, False])
def test_kernels_strides_pads(outc, inc, kh, kw, extra, hw, out_hw, mask):
    weights = [tagged(dc_weight(outc, inc, kh, kw)), raw(rand(outc, seed=1))]
    check_layer(TYPE, dc_params(outc, inc, kh, kw, extra=extra), weights,
                dc_inputs(inc, hw, out_hw, kh * kw, mask=mask))


def test_offsets_far_outside_the_input():
    check_layer(TYPE, dc_params(4, 3, 3, 3, extra={4: 1}), [tagged(dc_weight(4, 3, 3, 3)), raw(rand(4))],
                dc_inputs(3, (6, 7), (6, 7), 9, spread=9.0))


@pytest.mark.parametrize("act,act_params", [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None),
                                            (5, None), (6, [0.2, 0.5])])
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    extra = {4: 1, 9: act, **({10: act_params} if act_params else {})}
    weights = [tagged(dc_weight(4, 3, 3, 3))] + ([raw(rand(4, seed=1))] if bias else [])
    check_layer(TYPE, dc_params(4, 3, 3, 3, bias=bias, extra=extra), weights, dc_inputs(3, (6, 7), (6, 7), 9))


def test_offset_groups_match_ncnn_per_group():
    # ncnn reads only the first offset group (torchvision's offset_groups > 1 come out wrong there);
    # vkncnn gives group g its own offsets: the sum of ncnn runs on each group's channels.
    inc, outc, groups, taps = 4, 5, 2, 9
    x, offset, mask = dc_inputs(inc, (6, 7), (6, 7), taps, groups=groups)
    weight, bias = dc_weight(outc, inc, 3, 3), rand(outc, seed=1)
    per = inc // groups
    want = bias[:, None, None].copy()
    for g in range(groups):
        text = layer_param_text(TYPE, dc_params(outc, per, 3, 3, bias=False, extra={4: 1}), 3)
        part = run_ncnn(text, bin_bytes([tagged(weight[:, g * per:(g + 1) * per])]),
                        {"in0": x[g * per:(g + 1) * per], "in1": offset[g * 2 * taps:(g + 1) * 2 * taps],
                         "in2": mask[g * taps:(g + 1) * taps]}, ["out0"])["out0"]
        want = want + part
    text = layer_param_text(TYPE, dc_params(outc, inc, 3, 3, extra={4: 1}), 3)
    got = run_vkncnn(text, bin_bytes([tagged(weight), raw(bias)]), {"in0": x, "in1": offset, "in2": mask},
                     ["out0"])["out0"]
    assert np.allclose(got, want, atol=1e-4, rtol=1e-4)


def _run(params, weights, inputs):
    text = layer_param_text(TYPE, params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("inputs", [
    [rand(3, 6, 7), rand(18, 5, 5)],                        # offset size is not the output size
    [rand(3, 6, 7), rand(17, 6, 7)],                        # offset channels not 2*taps*G
    [rand(3, 6, 7), rand(18, 6, 7), rand(4, 6, 7)],         # mask channels not taps*G
    [rand(2, 6, 7), rand(18, 6, 7)],                        # channels do not match the weights
    [rand(3, 6, 7)],                                        # no offset
])
def test_bad_inputs_raise(inputs):
    with pytest.raises(ShapeError):
        _run(dc_params(4, 3, 3, 3, bias=False, extra={4: 1}), [tagged(dc_weight(4, 3, 3, 3))], inputs)


@pytest.mark.parametrize("extra", [{4: -233}, {6: 100}, {1: 0}])
def test_bad_params_raise(extra):
    with pytest.raises(ParamError):
        _run({**dc_params(4, 3, 3, 3, bias=False), **extra}, [tagged(dc_weight(4, 3, 3, 3))],
             dc_inputs(3, (6, 7), (6, 7), 9))


@needs_gpu
def test_in_gpu_net():
    check_in_gpu_net(TYPE, dc_params(8, 4, 3, 3, extra={4: 1, 9: 1}), [tagged(dc_weight(8, 4, 3, 3)), raw(rand(8))],
                     dc_inputs(4, (6, 7), (6, 7), 9))
