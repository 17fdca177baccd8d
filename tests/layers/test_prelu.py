import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_prelu_shared_slope(shape):
    check_layer("PReLU", {0: 1}, [raw([0.25])], [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_prelu_per_channel(shape):
    # one slope per channel: w of 1-D, h (rows) of 2-D, c of 3-D/4-D
    c = shape[0]
    check_layer("PReLU", {0: c}, [raw(rand(c, seed=3, lo=-2, hi=2))], [rand(*shape)])


def test_prelu_extra_slopes_are_unused():
    check_layer("PReLU", {0: 8}, [raw(rand(8, seed=3))], [rand(5, 4, 3)])


def test_prelu_too_few_slopes_is_an_error():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("PReLU")
    pd = ParamDict()
    pd.set(0, 3)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([np.ones(3, np.float32)]))
    with pytest.raises(Error):
        layer.forward_cpu([rand(4, 2, 2)], None)
