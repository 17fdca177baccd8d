"""LSTM against real ncnn: gates I F O G, every direction, projection (hidden_size),
int8 weights with dynamic quantization, initial/final states, input ranks, GPU net."""

from itertools import product

import pytest

from tests.layers import recurrent_checks as rc
from tests.oracle import needs_gpu, rand


@pytest.mark.parametrize("direction", [0, 1, 2])
@pytest.mark.parametrize("num_output,size,T", rc.SIZES)
def test_sequence(num_output, size, T, direction):
    rc.check_sequence("LSTM", num_output, size, T, direction)


@pytest.mark.parametrize("direction,hidden", product([0, 1, 2], [1, 3, 9]))
def test_projection(direction, hidden):
    rc.check_sequence("LSTM", 5, 7, 6, direction, hidden=hidden)


@pytest.mark.parametrize("direction,hidden", product([0, 1, 2], [None, 3]))
@pytest.mark.parametrize("num_output,size,T", [(4, 9, 5), (7, 3, 11)])
def test_int8(num_output, size, T, direction, hidden):
    rc.check_sequence("LSTM", num_output, size, T, direction, int8=True, hidden=hidden)


def test_int8_really_quantizes():
    rc.check_int8_is_quantized("LSTM")
    rc.check_int8_is_quantized("LSTM", hidden=5)


@pytest.mark.parametrize("shape", [(7,), (1, 7), (1, 4, 7), (1, 1, 4, 7)])
def test_input_ranks(shape):
    rc.check_sequence("LSTM", 5, 7, shape[-2] if len(shape) > 1 else 1, 0, x=rand(*shape, seed=2))


@pytest.mark.parametrize("with_initial", [False, True])
@pytest.mark.parametrize("direction,hidden", product([0, 1, 2], [None, 3]))
def test_states(direction, hidden, with_initial):
    rc.check_states("LSTM", 2, 5, 6, 4, direction, with_initial, hidden=hidden)


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    rc.check_states("LSTM", 2, 6, 5, 7, 2, True, hidden=4, gpu=True)


def test_bad_inputs_raise():
    rc.check_bad_inputs("LSTM", 2)


def test_bad_params_raise():
    rc.check_bad_params("LSTM")


def test_random_weights():
    rc.check_random_weights("LSTM", int8=True)
    rc.check_random_weights("LSTM", hidden=6, int8=True)
