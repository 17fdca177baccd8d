import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (5, 13), (3, 6, 7), (12, 2, 3, 5), (24, 4, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("slope", [0.0, 0.1, -1.5])
def test_relu_matches_ncnn(shape, slope):
    check_layer("ReLU", {0: slope}, [], [rand(*shape)])
