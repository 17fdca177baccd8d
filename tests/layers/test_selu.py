import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", [{}, {0: 1.2, 1: 0.8}, {0: 0.5, 1: 2.0}])
def test_selu_matches_ncnn(shape, params):
    x = rand(*shape, lo=-6, hi=6)
    x.ravel()[:4] = [-100.0, 100.0, -np.inf, np.inf]
    check_layer("SELU", params, [], [x])
