import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", [{}, {0: 0.3}, {0: -0.75}])
def test_threshold_matches_ncnn(shape, params):
    x = rand(*shape)
    x.ravel()[:2] = [params.get(0, 0.0), 0.0]  # exactly at the threshold: not above it
    check_layer("Threshold", params, [], [x])
