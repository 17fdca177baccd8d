import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5), (24, 4, 4)]
PARAMS = [{}, {0: 2.0}, {0: 0.5, 2: 3.0}, {0: 3.0, 1: -0.5, 2: 0.2}, {0: -1.0, 1: 2.0}, {0: -2.5, 2: 0.5},
          {0: 0.0}, {0: 1.5, 1: 0.0, 2: 2.0}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", PARAMS)
def test_power_matches_ncnn(shape, params):
    # negative bases included: libm pow gives nan for fractional powers, ncnn too
    x = rand(*shape, lo=-3, hi=3)
    x.ravel()[:4] = [0.0, -0.0, np.inf, -np.inf]
    check_layer("Power", params, [], [x])
