import pytest

from tests.oracle import check_layer, rand, raw

SHAPES = [(7,), (5, 13), (3, 6, 7), (16, 3, 5), (4, 3, 2, 5), (1, 5, 5)]
REGIONS = [(0, 1), (1, 1), (1, 0), (0, 0)]  # (across_spatial, across_channel)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("across_spatial,across_channel", REGIONS)
@pytest.mark.parametrize("channel_shared", [0, 1])
def test_normalize_matches_ncnn(shape, across_spatial, across_channel, channel_shared):
    # 1-D and 2-D blobs are a single channel
    c = shape[0] if len(shape) >= 3 else 1
    n = 1 if channel_shared else c
    eps_mode = (across_spatial + 2 * across_channel + channel_shared) % 3  # each mode meets each region
    params = {0: across_spatial, 4: across_channel, 1: channel_shared, 2: 1e-3, 3: n, 9: eps_mode}
    check_layer("Normalize", params, [raw(rand(n, seed=7, lo=0.5, hi=3))], [rand(*shape)])


@pytest.mark.parametrize("eps_mode", [0, 1, 2])
def test_normalize_eps_dominates_small_inputs(eps_mode):
    # tiny inputs: the three eps placements give visibly different results
    x = rand(4, 3, 5, lo=-1e-3, hi=1e-3)
    check_layer("Normalize", {0: 1, 1: 1, 2: 0.5, 3: 1, 9: eps_mode}, [raw([2.0])], [x])
    check_layer("Normalize", {0: 0, 1: 0, 2: 0.5, 3: 4, 9: eps_mode}, [raw(rand(4, seed=3))], [x])


def test_normalize_default_params():
    check_layer("Normalize", {3: 6}, [raw(rand(6, seed=7))], [rand(6, 4, 5)])
