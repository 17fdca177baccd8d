import pytest

from tests.oracle import check_layer, rand

SHAPES = [(5,), (3, 5), (2, 3, 5), (2, 2, 3, 5), (4, 3, 2), (8, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_tile_axis_matches_ncnn(shape):
    for axis in range(len(shape)):
        for tiles in (1, 2, 3):
            check_layer("Tile", {0: axis, 1: tiles}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_tile_repeats_match_ncnn(shape):
    for reps in ([2], [2, 3], [3, 1], [2, 1, 3], [1, 2, 1], [2, 1, 1, 2], [1, 2, 3, 1], [1, 1, 1, 1]):
        check_layer("Tile", {2: reps}, [], [rand(*shape)])
