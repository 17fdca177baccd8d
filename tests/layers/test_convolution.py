"""Convolution against real ncnn: kernels, strides, dilations, pads (explicit,
asymmetric, SAME_UPPER/LOWER), pad_value, bias, every fused activation, input dims,
dynamic weights, fp16/int8 weight storage and ncnn's int8 inference."""

from itertools import product

import numpy as np
import pytest

import vkncnn
from tests.oracle import (
    bin_bytes,
    check_layer,
    layer_param_text,
    rand,
    raw,
    rel_err,
    run_ncnn,
    run_vkncnn,
    tagged,
)
from vkncnn.errors import ParamError, ShapeError

ACTIVATIONS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]
CHANNELS = [(1, 4), (3, 8), (4, 12), (8, 3), (12, 16), (16, 24), (24, 1)]
PADS = [{}, {4: 1}, {4: 2, 15: 0, 14: 1, 16: 3}, {4: -233}, {4: -234}, {4: 0, 15: 1, 14: 2, 16: 0}]


def conv_params(outc, inc, kw, kh=None, bias=True, extra=None):
    kh = kw if kh is None else kh
    return {0: outc, 1: kw, 11: kh, 5: int(bias), 6: outc * inc * kw * kh, **(extra or {})}


def conv_weights(outc, inc, kw, kh=None, bias=True, seed=0):
    kh = kw if kh is None else kh
    w = [tagged(rand(outc, inc, kh, kw, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


def _grid():
    """Every kernel x stride x dilation, with pads, channels and sizes cycling through."""
    cases = []
    for i, (k, s, d) in enumerate(product([1, 2, 3, 5, 7], [1, 2, 3], [1, 2])):
        inc, outc = CHANNELS[i % len(CHANNELS)]
        extent = d * (k - 1) + 1
        h, w = extent + (i % 5), extent + 2 + (i * 3) % 7
        cases.append((k, s, d, PADS[i % len(PADS)], inc, outc, h, w))
    return cases


@pytest.mark.parametrize("k,s,d,pads,inc,outc,h,w", _grid())
def test_kernel_stride_dilation_pads(k, s, d, pads, inc, outc, h, w):
    params = conv_params(outc, inc, k, extra={2: d, 3: s, **pads})
    check_layer("Convolution", params, conv_weights(outc, inc, k, seed=k + s), [rand(inc, h, w, seed=d)])


@pytest.mark.parametrize("kw,kh,sw,sh,dw,dh,pads", [
    (3, 1, 1, 2, 1, 1, {4: 1, 14: 0}),
    (1, 5, 2, 1, 1, 2, {4: -233}),
    (2, 3, 2, 3, 2, 1, {4: -234}),
    (5, 2, 3, 1, 1, 3, {4: 2, 15: 1, 14: 0, 16: 1}),
    (4, 4, 4, 4, 1, 1, {}),
    (3, 3, 1, 1, 3, 2, {4: 3, 14: 2}),
])
def test_rectangular(kw, kh, sw, sh, dw, dh, pads):
    params = conv_params(8, 3, kw, kh)
    params.update({3: sw, 13: sh, 2: dw, 12: dh, **pads})
    check_layer("Convolution", params, conv_weights(8, 3, kw, kh), [rand(3, 13, 17)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
def test_bias_and_activation(act, act_params, bias):
    params = conv_params(12, 4, 3, bias=bias, extra={4: 1, 9: act})
    if act_params:
        params[10] = act_params
    check_layer("Convolution", params, conv_weights(12, 4, 3, bias=bias), [rand(4, 9, 10)])


@pytest.mark.parametrize("mode", [-233, -234])
@pytest.mark.parametrize("h,w,stride", [(7, 9, 3), (7, 8, 2), (8, 10, 4), (6, 11, 4)])
def test_same_crops_when_other_axis_pads(mode, h, w, stride):
    """ncnn quirk: SAME padding with a 3x1 kernel pads h but crops w where its pad is negative."""
    params = conv_params(4, 3, 1, kh=3, bias=False, extra={4: mode, 3: stride})
    check_layer("Convolution", params, conv_weights(4, 3, 1, kh=3, bias=False), [rand(3, h, w)])


@pytest.mark.parametrize("mode", [-233, -234])
@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize("h,w,stride_h", [(6, 8, 3), (9, 7, 4), (7, 8, 3)])
def test_same_crops_bottom_rows_when_width_pads(mode, gpu, h, w, stride_h):
    """The mirror case: a 1x3 kernel pads w, and ncnn takes h's negative amount all off the
    bottom (not split as on w)."""
    params = conv_params(4, 3, 3, kh=1, bias=False, extra={4: mode, 13: stride_h})
    check_layer("Convolution", params, conv_weights(4, 3, 3, kh=1, bias=False), [rand(3, h, w)], gpu=gpu)


@pytest.mark.parametrize("pads", [{4: 1}, {4: -233, 3: 2}, {4: -234, 3: 2}, {4: 0, 15: 2, 14: 1, 16: 0}])
def test_pad_value(pads):
    params = conv_params(4, 3, 3, extra={18: -0.75, **pads})
    check_layer("Convolution", params, conv_weights(4, 3, 3), [rand(3, 8, 9)])


def test_one_by_one_is_plain_matmul():
    check_layer("Convolution", conv_params(24, 16, 1), conv_weights(24, 16, 1), [rand(16, 7, 9)])
    check_layer("Convolution", conv_params(8, 16, 1, extra={3: 2}), conv_weights(8, 16, 1), [rand(16, 7, 9)])


@pytest.mark.parametrize("shape", [(5, 7), (1, 6, 8), (1, 1, 6, 8)])
def test_single_channel_dims(shape):
    """2-D input is one channel; 4-D with depth 1 is its (c, h, w) plane."""
    check_layer("Convolution", conv_params(4, 1, 3), conv_weights(4, 1, 3), [rand(*shape)])


def test_four_d_depth_one_many_channels():
    check_layer("Convolution", conv_params(4, 3, 3), conv_weights(4, 3, 3), [rand(3, 1, 6, 8)])


@pytest.mark.parametrize("act,act_params", [(0, None), (2, [0.2])])
def test_flat_input_is_innerproduct(act, act_params):
    """ncnn's legacy path: 1-D input, 1x1 kernel -> InnerProduct, 1-D output (SAME pads add nothing)."""
    params = conv_params(5, 12, 1, extra={9: act, 4: -233})
    if act_params:
        params[10] = act_params
    check_layer("Convolution", params, conv_weights(5, 12, 1), [rand(12)])


def test_flat_input_wide_kernel():
    """A 1-D input with a non-1x1 kernel is a (1, 1, w) plane."""
    check_layer("Convolution", conv_params(3, 1, 3, kh=1), conv_weights(3, 1, 3, kh=1), [rand(9)])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("pads", [{}, {4: 1}, {4: -233, 3: 2}])
def test_dynamic_weight(bias, pads):
    params = {0: 6, 1: 3, 5: int(bias), 19: 1, **pads}
    inputs = [rand(4, 9, 8), rand(6, 4, 3, 3, seed=5)] + ([rand(6, seed=6)] if bias else [])
    check_layer("Convolution", params, [], inputs)


def test_dynamic_weight_non_square_kernel():
    check_layer("Convolution", {0: 5, 19: 1, 3: 2}, [], [rand(3, 9, 8), rand(5, 3, 2, 4, seed=5)])


# -- weight storage and int8 ---------------------------------------------------------------------
FLAG_FP16 = (0x01306B47).to_bytes(4, "little")
FLAG_INT8 = (0x000D4B38).to_bytes(4, "little")


def _padded(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def fp16_tagged(a) -> bytes:
    return FLAG_FP16 + _padded(np.asarray(a, "<f2").tobytes())


def int8_tagged(q) -> bytes:
    return FLAG_INT8 + _padded(np.asarray(q, np.int8).tobytes())


def fp32(*arrays) -> bytes:
    return b"".join(np.asarray(a, "<f4").tobytes() for a in arrays)


def check_bin(type_name, params, weight_bytes, inputs, tol=1e-4):
    """check_layer for hand-made .bin bytes (fp16 / int8 storage flags)."""
    text = layer_param_text(type_name, params, len(inputs))
    feed = {f"in{i}": x for i, x in enumerate(inputs)}
    want = run_ncnn(text, weight_bytes, feed, ["out0"])["out0"]
    got = run_vkncnn(text, weight_bytes, feed, ["out0"])["out0"]
    assert got.shape == want.shape
    err = rel_err(got, want)
    assert err <= tol, f"{type_name} {params}: err {err}"


def test_fp16_weights():
    w = rand(8, 3, 3, 3)
    check_bin("Convolution", conv_params(8, 3, 3), fp16_tagged(w) + fp32(rand(8, seed=1)), [rand(3, 7, 8)])


def int8_scales(w):
    return (127 / np.abs(w.reshape(w.shape[0], -1)).max(axis=1)).astype(np.float32)


@pytest.mark.parametrize("term", [1, 2, 101, 102])
@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
def test_int8_inference(term, act, act_params):
    """int8_scale_term: ncnn quantizes input and weights and rescales (requantizes when > 100)."""
    w, x = rand(8, 4, 3, 3, seed=1), rand(4, 9, 11, seed=2)
    params = conv_params(8, 4, 3, extra={8: term, 4: 1, 9: act})
    if act_params:
        params[10] = act_params
    weights = conv_weights(8, 4, 3) + [raw(int8_scales(w)), raw(np.array([127 / np.abs(x).max()], np.float32))]
    weights[0] = tagged(w)
    if term > 100:
        weights.append(raw(np.array([4.0], np.float32)))
    check_layer("Convolution", params, weights, [x])


@pytest.mark.parametrize("pad_value", [0.0, 2.7, -1.6])
def test_int8_tagged_weights_and_pad_value(pad_value):
    """Pre-quantized int8 weights; the int8 input is padded with int(pad_value)."""
    w = rand(6, 3, 3, 3, seed=4)
    scales = int8_scales(w)
    q = np.clip(np.round(w * scales[:, None, None, None]), -127, 127)
    params = conv_params(6, 3, 3, extra={8: 1, 4: 1, 18: pad_value})
    wb = int8_tagged(q) + fp32(rand(6, seed=5), scales, [60.0])
    check_bin("Convolution", params, wb, [rand(3, 7, 9)])


def test_int8_chain_passes_int8_blob():
    """A 102 convolution hands an int8 blob to the next int8 convolution, which skips quantizing."""
    w1, w2 = rand(4, 3, 3, 3, seed=1), rand(5, 4, 3, 3, seed=3)
    text = ("7767517\n3 3\nInput in0 0 1 in0\n"
            "Convolution c1 1 1 in0 mid 0=4 1=3 5=1 6=108 8=102 9=1\n"
            "Convolution c2 1 1 mid out0 0=5 1=3 6=180 8=2\n")
    wb = b"\0" * 4 + fp32(w1) + fp32(rand(4, seed=2), int8_scales(w1), [100.0], [2.0])
    wb += b"\0" * 4 + fp32(w2) + fp32(int8_scales(w2), [2.0])
    for name in ("mid", "out0"):
        x = {"in0": rand(3, 9, 11)}
        want = run_ncnn(text, wb, x, [name])[name]
        got = run_vkncnn(text, wb, x, [name])[name]
        assert rel_err(got, want) <= 1e-4


def test_int8_off_runs_dequantized_fp32():
    """With use_int8_inference off, int8 weights are dequantized and run in fp32."""
    w = rand(4, 3, 3, 3)
    scales = int8_scales(w)
    q = np.clip(np.round(w * scales[:, None, None, None]), -127, 127)
    text = layer_param_text("Convolution", conv_params(4, 3, 3, bias=False, extra={8: 1}), 1)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.use_int8_inference = False
    net.load_param_mem(text)
    net.load_model(int8_tagged(q) + bin_bytes([raw(scales), raw([50.0])]))
    x = rand(3, 5, 6)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(x))
        got = ex.extract("out0")[1].numpy()
    wd = q / scales[:, None, None, None]
    want = sum(np.einsum("oc,chw->ohw", wd[:, :, i, j], x[:, i:i + 3, j:j + 4]) for i in range(3) for j in range(3))
    assert np.abs(got - want).max() < 1e-4


# -- errors ----------------------------------------------------------------------------------------
def _run(params, weights, inputs):
    text = layer_param_text("Convolution", params, len(inputs))
    return run_vkncnn(text, bin_bytes(weights), {f"in{i}": x for i, x in enumerate(inputs)}, ["out0"])


@pytest.mark.parametrize("shape", [(4, 7, 7), (3, 2, 7, 7), (3, 2, 2), (5,)])
def test_bad_inputs_raise(shape):
    with pytest.raises(ShapeError):
        _run(conv_params(4, 3, 3), conv_weights(4, 3, 3), [rand(*shape)])


@pytest.mark.parametrize("shape", [(11,), (12, 1, 1)])
def test_flat_input_size_and_pads(shape):
    """Wrong length, or explicit pads on the 1-D path (ncnn fails there): a clear error."""
    params = conv_params(5, 12, 1, extra={4: 1} if len(shape) == 1 else {4: -233})
    if len(shape) == 1:
        with pytest.raises(ShapeError):
            _run(params, conv_weights(5, 12, 1), [rand(*shape)])
        with pytest.raises(ShapeError):
            _run(conv_params(5, 12, 1), conv_weights(5, 12, 1), [rand(*shape)])
    else:
        check_layer("Convolution", params, conv_weights(5, 12, 1), [rand(*shape)])


@pytest.mark.parametrize("params", [{0: 4, 1: 3, 6: 100}, {0: 0, 1: 3, 6: 36}, {0: 4, 1: 3, 6: 108, 3: 0},
                                    {0: 4, 1: 3, 6: 108, 9: 9}, {0: 4, 1: 3, 6: 108, 4: -233, 14: 1},
                                    {0: 4, 1: 3, 6: 108, 4: 1, 15: -1}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, conv_weights(4, 3, 3), [rand(3, 7, 7)])
