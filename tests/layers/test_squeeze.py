import itertools

import pytest

from tests.oracle import check_layer, rand

SHAPES = [(1,), (5,), (1, 5), (3, 1), (1, 1), (1, 3, 5), (2, 1, 5), (2, 3, 1), (1, 1, 1), (1, 3, 1),
          (2, 1, 3, 1), (1, 1, 3, 1), (1, 2, 1, 1), (1, 1, 1, 1), (3, 2, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_squeeze_flags_match_ncnn(shape):
    for flags in itertools.product([0, 1], repeat=4):
        check_layer("Squeeze", dict(zip((0, 1, 11, 2), flags)), [], [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_squeeze_axes_match_ncnn(shape):
    n = len(shape)
    for axes in ([0], [-1], [0, -1], [1], [1, 2], [0, 1, 2], [-2], [0, 1, 2, 3]):
        if any((a + n if a < 0 else a) >= n or a < -n for a in axes):
            continue
        check_layer("Squeeze", {3: axes}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(120,), (1, 1), (16, 1, 3), (1, 12, 3), (1, 1, 1)])
@pytest.mark.parametrize("axes", [[3], [2, 3], [0, 3], [1, 2, 3], [0, 1, 2, 3]])
def test_squeeze_ignores_axes_beyond_the_rank_like_ncnn(shape, axes):
    check_layer("Squeeze", {3: axes}, [], [rand(*shape)])
