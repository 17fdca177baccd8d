"""Diag against real ncnn: 1-D to matrix and 2-D to diagonal for diagonals inside, on
the edge of and outside the matrix, in a GPU net."""

import pytest

from tests.oracle import check_layer, layer_param_text, needs_gpu, rand, run_vkncnn
from vkncnn.errors import ShapeError


@pytest.mark.parametrize("diagonal", [0, 1, 3, -1, -4])
@pytest.mark.parametrize("n", [1, 5])
def test_vector_to_matrix(n, diagonal):
    check_layer("Diag", {0: diagonal}, [], [rand(n, seed=n)])


@pytest.mark.parametrize("diagonal", [0, 1, 2, 4, -1, -2, 5, -3, 9, -9])
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_matrix_to_diagonal(shape, diagonal):
    check_layer("Diag", {0: diagonal}, [], [rand(*shape)])


def test_default_diagonal():
    check_layer("Diag", {}, [], [rand(6, 6)])


@pytest.mark.gpu
@needs_gpu
def test_in_gpu_net():
    check_layer("Diag", {0: -1}, [], [rand(7, 8)], gpu=True)


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 4)])
def test_3d_4d_raise(shape):  # ncnn returns an empty blob without an error
    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Diag", {}, 1), b"", {"in0": rand(*shape)}, ["out0"])
