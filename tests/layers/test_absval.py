import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_absval_matches_ncnn(shape):
    x = rand(*shape)
    x.ravel()[:4] = [-0.0, -np.inf, np.inf, -1e30]
    check_layer("AbsVal", {}, [], [x])
