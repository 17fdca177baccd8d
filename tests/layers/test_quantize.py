"""Quantize, Dequantize and Requantize against real ncnn (int8 outputs exact).

Dequantize/Requantize read int32 accumulators: ncnn gets int32 Mats, vkncnn the same
integers as float32. Measured on ncnn 1.0.20261020: a 1-D blob uses only the first
scale/bias; and x86 Requantize with per-channel tables is wrong when the packed axis
is 4 mod 8 (its pack4 path), so those cases are skipped.
"""

import numpy as np
import pytest

from tests.layers.typed_oracle import check_layer_typed, needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer

SHAPES = [(8,), (5, 6), (8, 3), (3, 5, 7), (1, 4, 4), (12, 3, 5), (3, 2, 2, 5), (4, 2, 3, 3)]


def _ints(shape, seed=0):
    return np.random.default_rng(seed).integers(-3000, 3000, shape).astype(np.int32)


def _table(n, lo, hi, seed):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_matches_ncnn(shape, per_channel):
    n = shape[0] if per_channel else 1
    x = rand(*shape, lo=-6, hi=6)
    x.ravel()[:4] = [0.5, -0.5, 2.5, -200.0]  # halves round away from zero; clamp at -127
    out = check_layer("Quantize", {0: n}, [_table(n, 10, 40, 1)], [x], tol=0)
    assert out == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scale_n,bias_n", [(1, 0), (1, 1), ("c", 0), ("c", "c"), (1, "c")])
def test_dequantize_matches_ncnn(shape, scale_n, bias_n):
    c = shape[0]
    sn = c if scale_n == "c" else scale_n
    bn = c if bias_n == "c" else bias_n
    weights = [_table(sn, 0.001, 0.01, 2)] + ([_table(bn, -1, 1, 3)] if bn else [])
    check_layer_typed("Dequantize", {0: sn, 1: bn}, weights, [_ints(shape)])


def _pack4_bug(shape, tables) -> bool:
    return len(shape) >= 2 and shape[0] % 8 == 4 and any(t > 1 for t in tables)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("si,so,bias,act,act_params", [
    (1, 1, 0, 0, []), ("c", "c", "c", 1, []), ("c", 1, 1, 2, [0.1]), (1, "c", "c", 3, [-1.0, 2.0]),
    ("c", "c", 0, 4, []), ("c", 1, "c", 5, []), (1, 1, 1, 6, [0.2, 0.5])])
def test_requantize_matches_ncnn(shape, si, so, bias, act, act_params):
    c = shape[0]
    si, so, bias = (c if v == "c" else v for v in (si, so, bias))
    if _pack4_bug(shape, (si, so, bias)):
        pytest.skip("ncnn 1.0.20261020 x86 Requantize mis-applies per-channel tables when the packed axis is 4 mod 8")
    params = {0: si, 1: so, 2: bias, 3: act}
    if act_params:
        params[4] = act_params
    weights = [_table(si, 0.001, 0.01, 4), _table(so, 20, 60, 5)] + ([_table(bias, -1, 1, 6)] if bias else [])
    check_layer_typed("Requantize", params, weights, [_ints(shape)], tol=0)


def test_quantize_outputs_int8_values():
    x = np.array([0.005, 1.0, -1.0, 0.0125], np.float32)
    out = run_layer("Quantize", {}, [np.array([100.0], np.float32)], [x])[0]
    np.testing.assert_array_equal(out, [1, 100, -100, 1])


@pytest.mark.parametrize("type_name,params,weights", [
    ("Quantize", {0: 0}, []), ("Dequantize", {0: 1, 1: -1}, [np.ones(1)]),
    ("Requantize", {3: 9}, [np.ones(1), np.ones(1)])])
def test_quant_bad_params(type_name, params, weights):
    with pytest.raises(ParamError, match=type_name):
        run_layer(type_name, params, weights, [rand(3, 4)])


@pytest.mark.parametrize("type_name,params,weights", [
    ("Quantize", {0: 5}, [np.ones(5)]), ("Dequantize", {0: 5}, [np.ones(5)]),
    ("Requantize", {0: 1, 1: 5}, [np.ones(1), np.ones(5)])])
def test_quant_table_size_must_match_channels(type_name, params, weights):
    with pytest.raises(ShapeError, match="has 5 values"):
        run_layer(type_name, params, weights, [rand(3, 4, 4)])


@needs_gpu
def test_quantize_inside_gpu_net_matches_ncnn():
    check_layer("Quantize", {0: 3}, [_table(3, 10, 40, 1)], [rand(3, 5, 7, lo=-4, hi=4)], tol=0, gpu=True)


@needs_gpu
def test_dequantize_inside_gpu_net_matches_ncnn():
    check_layer_typed("Dequantize", {0: 3, 1: 3}, [_table(3, 0.001, 0.01, 2), _table(3, -1, 1, 3)],
                      [_ints((3, 5, 7))], gpu=True)


@needs_gpu
def test_requantize_inside_gpu_net_matches_ncnn():
    weights = [_table(3, 0.001, 0.01, 4), _table(3, 20, 60, 5), _table(3, -1, 1, 6)]
    check_layer_typed("Requantize", {0: 3, 1: 3, 2: 3, 3: 1}, weights, [_ints((3, 5, 7))], tol=0, gpu=True)
