import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]
EDGES = np.array([0, -0.0, 1, -1, 100, -100, 88.5, -88.5, 1e30, -1e30, 0.5, -0.5, 2.5, 1e-40,
                  np.inf, -np.inf], np.float32)


def with_edges(shape, seed=0):
    x = rand(*shape, seed=seed, lo=-6, hi=6)
    n = min(x.size, EDGES.size)
    x.ravel()[:n] = EDGES[:n]
    return x


@pytest.mark.parametrize("shape", SHAPES)
def test_sigmoid_matches_ncnn(shape):
    check_layer("Sigmoid", {}, [], [rand(*shape, lo=-8, hi=8)])
    check_layer("Sigmoid", {}, [], [with_edges(shape)])
