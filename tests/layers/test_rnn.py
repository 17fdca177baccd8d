"""RNN against real ncnn: h = tanh(W_xc x + W_hc h + b), every direction, int8
weights with dynamic quantization, initial/final hidden state, input ranks, GPU net."""

import pytest

from tests.layers import recurrent_checks as rc
from tests.oracle import needs_gpu, rand


@pytest.mark.parametrize("direction", [0, 1, 2])
@pytest.mark.parametrize("num_output,size,T", rc.SIZES)
def test_sequence(num_output, size, T, direction):
    rc.check_sequence("RNN", num_output, size, T, direction)


@pytest.mark.parametrize("direction", [0, 1, 2])
@pytest.mark.parametrize("num_output,size,T", [(4, 9, 5), (7, 3, 11), (16, 12, 3)])
def test_int8(num_output, size, T, direction):
    rc.check_sequence("RNN", num_output, size, T, direction, int8=True)


def test_int8_really_quantizes():
    rc.check_int8_is_quantized("RNN")


@pytest.mark.parametrize("shape", [(7,), (1, 7), (1, 4, 7), (1, 1, 4, 7)])
def test_input_ranks(shape):
    rc.check_sequence("RNN", 5, 7, shape[-2] if len(shape) > 1 else 1, 0, x=rand(*shape, seed=2))


@pytest.mark.parametrize("with_initial", [False, True])
@pytest.mark.parametrize("direction", [0, 1, 2])
def test_states(direction, with_initial):
    rc.check_states("RNN", 1, 5, 6, 4, direction, with_initial)


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    rc.check_states("RNN", 1, 6, 5, 7, 2, True, gpu=True)


def test_bad_inputs_raise():
    rc.check_bad_inputs("RNN", 1)


def test_bad_params_raise():
    rc.check_bad_params("RNN")


def test_random_weights():
    rc.check_random_weights("RNN", int8=True)
