import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5), (24, 4, 4)]
PARAMS = [{}, {0: 2.0}, {0: -1.0, 1: 0.5, 2: 2.0}, {0: 10.0, 1: 2.0, 2: 1.0}, {0: 0.5}, {1: -1.0}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", PARAMS)
def test_log_matches_ncnn(shape, params):
    # negative arguments give nan, zero gives -inf (libm log, as ncnn's Log layer uses)
    x = rand(*shape, lo=-3, hi=3)
    x.ravel()[:4] = [0.0, -0.0, np.inf, 1e-40]
    check_layer("Log", params, [], [x])
