import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

# groups split the channel axis: w of 1-D, h of 2-D, c of 3-D/4-D
CASES = [((12,), 3), ((16,), 4), ((12, 5), 4), ((8, 3), 2), ((3, 6, 7), 3), ((16, 3, 5), 4), ((24, 4, 4), 8),
         ((12, 2, 3, 5), 6), ((4, 3, 2, 5), 2), ((1, 5, 5), 1), ((8, 7), 1)]


@pytest.mark.parametrize("shape,group", CASES)
@pytest.mark.parametrize("affine", [0, 1])
def test_groupnorm_matches_ncnn(shape, group, affine):
    c = shape[0]
    weights = [raw(rand(c, seed=1, lo=-2, hi=2)), raw(rand(c, seed=2))] if affine else []
    check_layer("GroupNorm", {0: group, 1: c, 2: 1e-4, 3: affine}, weights, [rand(*shape, lo=-3, hi=3)])


def test_groupnorm_default_eps_and_group():
    weights = [raw(rand(6, seed=1)), raw(rand(6, seed=2))]
    check_layer("GroupNorm", {1: 6}, weights, [rand(6, 2, 3, lo=-0.1, hi=0.1)])


def test_groupnorm_bad_params_raise():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    pd = ParamDict()
    pd.set(0, 4)
    pd.set(1, 6)
    with pytest.raises(Error):
        create_layer("GroupNorm").load_param(pd)
