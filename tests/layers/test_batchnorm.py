import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

# the channel axis is w for 1-D, h for 2-D, c for 3-D/4-D: numpy axis 0 each time
SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


def stats(c):
    var = rand(c, seed=3, lo=0.05, hi=2.0)
    return [raw(rand(c, seed=1)), raw(rand(c, seed=2)), raw(var), raw(rand(c, seed=4))]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [0.0, 1e-3, 0.5])
def test_batchnorm_matches_ncnn(shape, eps):
    check_layer("BatchNorm", {0: shape[0], 1: eps}, stats(shape[0]), [rand(*shape, lo=-3, hi=3)])


def test_batchnorm_is_folded_at_load():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("BatchNorm")
    pd = ParamDict()
    pd.set(0, 2)
    pd.set(1, 0.0)
    layer.load_param(pd)
    slope, mean, var, bias = [2, 1], [1, 0], [4, 1], [0.5, 0]
    layer.load_model(ModelBinFromMatArray([np.array(v, np.float32) for v in (slope, mean, var, bias)]))
    # y = slope * (x - mean) / sqrt(var) + bias = b * x + a
    assert np.allclose(layer.b_data, [1, 1]) and np.allclose(layer.a_data, [-0.5, 0])


def test_batchnorm_wrong_channel_count_raises():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("BatchNorm")
    pd = ParamDict()
    pd.set(0, 3)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([np.ones(3, np.float32)] * 4))
    with pytest.raises(Error):
        layer.forward_cpu([rand(4, 2, 2)], None)
