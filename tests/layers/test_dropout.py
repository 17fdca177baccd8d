import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (2, 3, 4, 5), (16, 3, 3), (24, 1, 2)])
@pytest.mark.parametrize("scale", [None, 1.0, 0.5, 2.5, -0.3])
def test_dropout_matches_ncnn(shape, scale):
    check_layer("Dropout", {} if scale is None else {0: scale}, [], [rand(*shape)])
