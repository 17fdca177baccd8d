import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]
# alpha > 0 only: for alpha < 0 ncnn's x86 kernel gives different answers in its SIMD
# body (clamp form) and its scalar tail (lower/upper thresholds)
PARAMS = [{}, {0: 1.0 / 6, 1: 0.5}, {0: 0.3, 1: 0.2}, {0: 0.5, 1: 0.0}, {0: 2.0, 1: 1.5}, {0: 0.2, 1: -0.3}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", PARAMS)
def test_hardswish_matches_ncnn(shape, params):
    check_layer("HardSwish", params, [], [rand(*shape, lo=-6, hi=6)])
