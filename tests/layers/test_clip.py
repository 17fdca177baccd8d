import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]
PARAMS = [{}, {0: -1.5, 1: 2.0}, {0: 0.0, 1: 6.0}, {0: -0.25}, {1: 0.5}, {0: 1.0, 1: -1.0}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", PARAMS)
def test_clip_matches_ncnn(shape, params):
    x = rand(*shape, lo=-4, hi=4)
    x.ravel()[:3] = [np.inf, -np.inf, 1e38]
    check_layer("Clip", params, [], [x])
