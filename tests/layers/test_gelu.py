import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]
EDGES = np.array([0, -0.0, 1, -1, 100, -100, 88.5, -88.5, 1e30, -1e30, 0.5, -0.5, 2.5, 1e-40,
                  np.inf, -np.inf], np.float32)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fast_gelu", [0, 1])
def test_gelu_matches_ncnn(shape, fast_gelu):
    check_layer("GELU", {0: fast_gelu}, [], [rand(*shape, lo=-6, hi=6)])
    x = rand(*shape, seed=1, lo=-6, hi=6)
    n = min(x.size, EDGES.size)
    x.ravel()[:n] = EDGES[:n]
    check_layer("GELU", {0: fast_gelu}, [], [x])


def test_gelu_default_is_erf_form():
    # the erf and tanh forms differ by ~1e-3 around |x| = 2: make sure the default is erf
    x = np.linspace(-4, 4, 64, dtype=np.float32)
    check_layer("GELU", {}, [], [x], tol=1e-5)
