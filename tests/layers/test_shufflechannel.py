import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("channels,group", [(4, 2), (6, 3), (8, 2), (12, 3), (12, 4), (16, 4), (24, 2),
                                            (24, 3), (24, 8), (3, 1), (3, 3), (16, 16)])
@pytest.mark.parametrize("reverse", [0, 1])
def test_shuffle_channel_matches_ncnn(channels, group, reverse):
    check_layer("ShuffleChannel", {0: group, 1: reverse}, [], [rand(channels, 3, 5)])
    check_layer("ShuffleChannel", {0: group, 1: reverse}, [], [rand(channels, 1, 1)])


@pytest.mark.parametrize("channels,group", [(4, 2), (12, 3), (8, 4)])
@pytest.mark.parametrize("reverse", [0, 1])
def test_shuffle_channel_4d_matches_ncnn(channels, group, reverse):
    check_layer("ShuffleChannel", {0: group, 1: reverse}, [], [rand(channels, 2, 3, 5)])
