import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(7,), (5, 6), (1, 5, 6), (3, 4, 5), (8, 3, 3), (12, 1, 1), (16, 2, 2),
                                   (2, 3, 4, 5), (8, 2, 3, 2)])
def test_flatten_matches_ncnn(shape):
    check_layer("Flatten", {}, [], [rand(*shape)])
