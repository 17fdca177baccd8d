"""The checks every recurrent layer (RNN, GRU, LSTM) gets against real ncnn; each
test_<layer>.py instantiates them for its type."""

from __future__ import annotations

import numpy as np
import pytest

from tests.layers.recurrent_cases import as_bin, rnn_params, rnn_weights
from tests.oracle import check_layer, layer_param_text, rand, run_vkncnn
from vkncnn.errors import Error, ParamError, ShapeError

# (num_output, input size, T): odd sizes, one step, long-ish sequences
SIZES = [(1, 1, 1), (3, 5, 4), (5, 7, 9), (8, 3, 16), (13, 11, 6), (16, 16, 2)]


def check_sequence(kind, num_output, size, T, direction, int8=False, hidden=None, x=None):
    params = rnn_params(kind, num_output, size, direction, hidden, int8)
    weights = as_bin(rnn_weights(kind, num_output, size, direction, hidden, int8, seed=num_output + T))
    x = rand(T, size, seed=T) if x is None else x
    check_layer(kind, params, weights, [x])


def check_states(kind, n_states, num_output, size, T, direction, with_initial, hidden=None, gpu=False):
    nd = 2 if direction == 2 else 1
    params = rnn_params(kind, num_output, size, direction, hidden)
    weights = as_bin(rnn_weights(kind, num_output, size, direction, hidden, seed=7))
    inputs = [rand(T, size, seed=1)]
    if with_initial:
        inputs.append(rand(nd, num_output, seed=2))
        if n_states == 2:
            inputs.append(rand(nd, hidden or num_output, seed=3))
    check_layer(kind, params, weights, inputs, n_outputs=1 + n_states, gpu=gpu)


def run(kind, params, weights, inputs, n_outputs=1):
    text = layer_param_text(kind, params, len(inputs), n_outputs)
    feeds = {f"in{i}": x for i, x in enumerate(inputs)}
    return run_vkncnn(text, weights, feeds, [f"out{i}" for i in range(n_outputs)])


def check_int8_is_quantized(kind, hidden=None):
    """The int8 path really quantizes: it lands near, not on, the fp32 result."""
    x = rand(6, 9, seed=4)
    fp = run(kind, rnn_params(kind, 8, 9, 0, hidden), as_bin(rnn_weights(kind, 8, 9, 0, hidden)), [x])["out0"]
    q = run(kind, rnn_params(kind, 8, 9, 0, hidden, int8=True),
            as_bin(rnn_weights(kind, 8, 9, 0, hidden, int8=True)), [x])["out0"]
    diff = float(np.max(np.abs(q - fp)))
    assert 1e-5 < diff < 0.1, diff


def check_bad_inputs(kind, n_states):
    params, weights = rnn_params(kind, 4, 5), as_bin(rnn_weights(kind, 4, 5))
    with pytest.raises(ShapeError):          # rows of the wrong width
        run(kind, params, weights, [rand(3, 6)])
    with pytest.raises(ShapeError):          # several channels: ncnn would read only the first
        run(kind, params, weights, [rand(2, 3, 5)])
    with pytest.raises(ShapeError):          # initial state of the wrong size
        run(kind, params, weights, [rand(3, 5)] + [rand(1, 3)] * n_states)
    bi = rnn_params(kind, 4, 5, 2)
    with pytest.raises(ShapeError):          # bidirectional states must be two rows
        run(kind, bi, as_bin(rnn_weights(kind, 4, 5, 2)), [rand(3, 5)] + [rand(8)] * n_states)


def check_bad_params(kind):
    good = rnn_params(kind, 4, 5)
    for bad in ({**good, 2: 3}, {**good, 0: 0}, {**good, 1: good[1] + 1}, {**good, 1: 0}):
        with pytest.raises(ParamError):
            run(kind, bad, b"", [rand(3, 5)])
    with pytest.raises(Error):               # a truncated .bin
        run(kind, good, as_bin(rnn_weights(kind, 4, 5))[:-8], [rand(3, 5)])


def check_random_weights(kind, hidden=None, int8=False):
    """tools/randweights gives every load a sensible value: outputs neither vanish nor
    saturate, and int8 scales fit the weights (int8 lands near the fp32 result)."""
    from vkncnn.testing import random_layer_weights

    x = rand(12, 10, seed=9)
    params = rnn_params(kind, 16, 10, 2, hidden)
    out = run(kind, params, random_layer_weights(kind, params, 1), [x])["out0"]
    assert np.all(np.isfinite(out)) and 0.02 < float(np.std(out)) < 0.9
    if int8:
        p8 = rnn_params(kind, 16, 10, 2, hidden, int8=True)
        w8 = random_layer_weights(kind, p8, 1)
        q = run(kind, p8, w8, [x])["out0"]  # same seed: the same weights, quantized
        assert 1e-5 < float(np.max(np.abs(q - out))) < 0.1
