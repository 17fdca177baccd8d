import pytest

from tests.oracle import check_layer, rand, raw

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_bias_matches_ncnn(shape):
    # one bias per channel of a 3-D/4-D blob; a 1-D/2-D blob is one channel and takes bias[0]
    n = shape[0] if len(shape) >= 3 else 3
    check_layer("Bias", {0: n}, [raw(rand(n, seed=1, lo=-2, hi=2))], [rand(*shape)])
