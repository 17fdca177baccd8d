import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(3, 4, 5), (4, 3, 5), (8, 2, 3), (12, 5, 1), (1, 6, 7), (16, 4, 4)])
@pytest.mark.parametrize("order_type", range(6))
def test_permute_3d_matches_ncnn(shape, order_type):
    check_layer("Permute", {0: order_type}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3, 2, 5), (8, 2, 3, 4), (3, 4, 1, 2)])
def test_permute_4d_matches_ncnn(shape):
    for order_type in range(24):
        check_layer("Permute", {0: order_type}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(5, 7), (4, 8), (1, 3), (12, 4)])
def test_permute_2d_matches_ncnn(shape):
    for order_type in (0, 1):
        check_layer("Permute", {0: order_type}, [], [rand(*shape)])
