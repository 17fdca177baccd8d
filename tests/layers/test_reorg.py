import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(1, 4, 6), (3, 6, 6), (4, 8, 4), (8, 5, 7), (12, 6, 9), (16, 4, 4)])
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("mode", [0, 1])
def test_reorg_matches_ncnn(shape, stride, mode):
    if min(shape[1:]) < stride:
        return
    check_layer("Reorg", {0: stride, 1: mode}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(4, 6), (7, 9), (2, 2, 4, 6), (8, 3, 5, 4)])
@pytest.mark.parametrize("mode", [0, 1])
def test_reorg_2d_and_4d_like_ncnn(shape, mode):
    check_layer("Reorg", {0: 2, 1: mode}, [], [rand(*shape)])
