import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("channels,r", [(4, 2), (8, 2), (12, 2), (16, 2), (9, 3), (18, 3), (24, 2), (16, 4), (3, 1)])
@pytest.mark.parametrize("mode", [0, 1])
def test_pixel_shuffle_matches_ncnn(channels, r, mode):
    check_layer("PixelShuffle", {0: r, 1: mode}, [], [rand(channels, 3, 5)])
    check_layer("PixelShuffle", {0: r, 1: mode}, [], [rand(channels, 1, 2)])


@pytest.mark.parametrize("mode", [0, 1])
def test_pixel_shuffle_4d_reads_first_depth_slice_like_ncnn(mode):
    check_layer("PixelShuffle", {0: 2, 1: mode}, [], [rand(8, 2, 3, 5)])
    check_layer("PixelShuffle", {0: 2, 1: mode}, [], [rand(4, 3, 2, 2)])
