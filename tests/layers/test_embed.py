"""Embed against real ncnn: table sizes, bias, int8 table, clamped indices, input ranks,
GPU net. ncnn reads the ids' int bits, vkncnn their values: each side gets the same
np.int32 ids the way a pyncnn script hands them over."""

import numpy as np
import pytest

from tests.layers.recurrent_cases import int8_tagged
from tests.oracle import bin_bytes, layer_param_text, needs_gpu, rand, raw, rel_err, run_ncnn, run_vkncnn, tagged
from vkncnn.errors import Error, ParamError, ShapeError
from vkncnn.testing import random_layer_weights


def embed_case(num_output, input_dim, bias, int8=False, seed=0):
    params = {0: num_output, 1: input_dim, 2: int(bias), 3: num_output * input_dim}
    table = rand(input_dim, num_output, seed=seed)
    b = [raw(rand(num_output, seed=seed + 1))] if bias else []
    if not int8:
        return params, bin_bytes([tagged(table)] + b)
    scale = np.float32(127.0 / np.abs(table).max())
    q = np.clip(np.round(table * scale), -127, 127)
    return {**params, 18: 1}, int8_tagged(q) + bin_bytes(b + [raw([scale])])


def check(params, weights, ids, gpu=False):
    ids = np.asarray(ids, np.int32)
    text = layer_param_text("Embed", params, 1)
    want = run_ncnn(text, weights, {"in0": ids.view(np.float32)}, ["out0"])["out0"]
    got = run_vkncnn(text, weights, {"in0": ids}, ["out0"], gpu=gpu)["out0"]
    assert got.shape == want.shape
    assert rel_err(got, want) <= 1e-6
    return got


@pytest.mark.parametrize("int8", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("num_output,input_dim,words", [(1, 1, 1), (4, 7, 5), (13, 100, 17), (16, 3, 40)])
def test_lookup(num_output, input_dim, words, bias, int8):
    params, weights = embed_case(num_output, input_dim, bias, int8, seed=words)
    ids = np.random.default_rng(words).integers(0, input_dim, words)
    check(params, weights, ids)


def test_out_of_range_indices_clamp():
    params, weights = embed_case(5, 6, True)
    out = check(params, weights, [-5, -1, 0, 5, 6, 1000])
    assert np.array_equal(out[0], out[2]) and np.array_equal(out[3], out[5])


@pytest.mark.parametrize("shape", [(1, 6), (1, 1, 6), (1, 1, 1, 6)])
def test_single_row_ranks(shape):
    params, weights = embed_case(4, 9, False)
    check(params, weights, np.arange(6).reshape(shape) % 9)


def test_int8_table_really_quantized():
    p32, w32 = embed_case(8, 10, False)
    p8, w8 = embed_case(8, 10, False, int8=True)
    ids = {"in0": np.arange(10, dtype=np.int32)}
    a = run_vkncnn(layer_param_text("Embed", p32, 1), w32, ids, ["out0"])["out0"]
    b = run_vkncnn(layer_param_text("Embed", p8, 1), w8, ids, ["out0"])["out0"]
    assert 1e-5 < np.abs(a - b).max() < 0.02


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    params, weights = embed_case(12, 20, True)
    check(params, weights, np.arange(11) * 3 % 20, gpu=True)


def test_random_weights_are_unit_rows():
    wb = random_layer_weights("Embed", {0: 64, 1: 50, 3: 3200}, 1)
    table = np.frombuffer(wb[4:], "<f4")
    assert table.size == 3200 and 0.8 < table.std() < 1.2


def test_bad_input_and_params_raise():
    params, weights = embed_case(4, 9, False)
    with pytest.raises(ShapeError):   # two rows: ncnn would silently drop the second
        run_vkncnn(layer_param_text("Embed", params, 1), weights, {"in0": np.zeros((2, 3), np.int32)}, ["out0"])
    for bad in ({**params, 3: 35}, {**params, 0: 0}, {**params, 1: -1}):
        with pytest.raises(ParamError):
            run_vkncnn(layer_param_text("Embed", bad, 1), weights, {"in0": np.zeros(3, np.int32)}, ["out0"])
    with pytest.raises(Error):        # a truncated table
        run_vkncnn(layer_param_text("Embed", params, 1), weights[:-4], {"in0": np.zeros(3, np.int32)}, ["out0"])
