"""InnerProduct against real ncnn: every input dim (flattened, or a 2-D batch of
rows), bias, every fused activation, fp16 weights and int8 inference."""

import numpy as np
import pytest

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


def ip_params(outc, inc, bias=True, extra=None):
    return {0: outc, 1: int(bias), 2: outc * inc, **(extra or {})}


def ip_weights(outc, inc, bias=True, seed=0):
    w = [tagged(rand(outc, inc, seed=seed))]
    return w + [raw(rand(outc, seed=seed + 1))] if bias else w


@pytest.mark.parametrize("shape", [(24,), (2, 12), (1, 24), (3, 24), (17, 24), (2, 3, 4), (4, 6, 1),
                                   (2, 1, 3, 4), (1, 2, 3, 4), (4, 6)])
@pytest.mark.parametrize("outc", [1, 13])
def test_dims(shape, outc):
    """2-D with w == num_input: one output row per input row; anything else is flattened."""
    check_layer("InnerProduct", ip_params(outc, 24), ip_weights(outc, 24), [rand(*shape)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("shape", [(16,), (5, 16)])
def test_bias_and_activation(act, act_params, bias, shape):
    extra = {9: act, **({10: act_params} if act_params else {})}
    check_layer("InnerProduct", ip_params(12, 16, bias, extra), ip_weights(12, 16, bias), [rand(*shape)])


@pytest.mark.parametrize("inc,outc", [(1, 1), (3, 4), (64, 24), (300, 7)])
def test_sizes(inc, outc):
    check_layer("InnerProduct", ip_params(outc, inc), ip_weights(outc, inc), [rand(inc)])


def _check_bin(params, wb, x):
    text = layer_param_text("InnerProduct", params, 1)
    want = run_ncnn(text, wb, {"in0": x}, ["out0"])["out0"]
    got = run_vkncnn(text, wb, {"in0": x}, ["out0"])["out0"]
    assert got.shape == want.shape and rel_err(got, want) <= 1e-4


def test_fp16_weights():
    w = rand(6, 10)
    wb = (0x01306B47).to_bytes(4, "little") + np.asarray(w, "<f2").tobytes() + bin_bytes([raw(rand(6))])
    _check_bin(ip_params(6, 10), wb, rand(10))


@pytest.mark.parametrize("shape", [(24,), (3, 24), (1, 24), (2, 3, 4)])
@pytest.mark.parametrize("act", [0, 2, 4])
def test_int8_inference(shape, act):
    w = rand(5, 24, seed=1)
    scales = (127 / np.abs(w).max(axis=1)).astype(np.float32)
    extra = {8: 1, 9: act, **({10: [0.2]} if act == 2 else {})}
    check_layer("InnerProduct", ip_params(5, 24, extra=extra),
                [tagged(w), raw(rand(5, seed=2)), raw(scales), raw([50.0])], [rand(*shape)])


def test_int8_tagged_weights():
    w = rand(5, 24, seed=1)
    scales = (127 / np.abs(w).max(axis=1)).astype(np.float32)
    q = np.clip(np.round(w * scales[:, None]), -127, 127).astype(np.int8)
    wb = (0x000D4B38).to_bytes(4, "little") + q.tobytes() + bin_bytes([raw(rand(5)), raw(scales), raw([40.0])])
    _check_bin(ip_params(5, 24, extra={8: 1}), wb, rand(3, 24))


def _run(params, weights, x):
    return run_vkncnn(layer_param_text("InnerProduct", params, 1), bin_bytes(weights), {"in0": x}, ["out0"])


@pytest.mark.parametrize("shape", [(23,), (3, 23), (2, 3, 5)])
def test_wrong_size_raises(shape):
    with pytest.raises(ShapeError):
        _run(ip_params(5, 24), ip_weights(5, 24), rand(*shape))


@pytest.mark.parametrize("params", [{0: 5, 2: 23}, {0: 0, 2: 24}, {0: 4, 2: 24, 9: 7}])
def test_bad_params_raise(params):
    with pytest.raises(ParamError):
        _run(params, [tagged(rand(24))], rand(24))
