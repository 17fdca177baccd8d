import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

SHAPES = [(3, 6, 7), (16, 3, 5), (1, 5, 5), (24, 4, 4), (8, 1, 9), (12, 2, 3, 5), (4, 3, 2, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [1e-5, 0.01])
def test_instancenorm_affine(shape, eps):
    c = shape[0]
    weights = [raw(rand(c, seed=1, lo=-2, hi=2)), raw(rand(c, seed=2))]
    check_layer("InstanceNorm", {0: c, 1: eps, 2: 1}, weights, [rand(*shape, lo=-3, hi=3)])


@pytest.mark.parametrize("shape", SHAPES)
def test_instancenorm_no_affine(shape):
    check_layer("InstanceNorm", {0: shape[0], 1: 1e-3, 2: 0}, [], [rand(*shape, lo=-3, hi=3)])


def test_instancenorm_default_params():
    check_layer("InstanceNorm", {0: 4}, [raw(rand(4, seed=1)), raw(rand(4, seed=2))], [rand(4, 5, 6)])


def test_instancenorm_bad_inputs_raise():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("InstanceNorm")
    pd = ParamDict()
    pd.set(0, 3)
    pd.set(2, 1)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([np.ones(3, np.float32), np.zeros(3, np.float32)]))
    with pytest.raises(Error):
        layer.forward_cpu([rand(4, 5, 6)], None)  # 4 channels, 3 of gamma/beta
    with pytest.raises(Error):
        layer.forward_cpu([rand(3, 6)], None)  # not a (c, ...) blob
    assert np.allclose(layer.forward_cpu([rand(3, 5, 6)], None)[0].mean(axis=(1, 2)), 0, atol=1e-6)


@pytest.mark.parametrize("channels", [0, 3])
@pytest.mark.parametrize("shape", [(2, 4, 6), (12, 3, 3), (3, 3, 4, 5)])
def test_instancenorm_without_affine_takes_any_channel_count(channels, shape):
    """ncnn's own test writes channels 0 when affine is off: only gamma/beta fix the count."""
    check_layer("InstanceNorm", {0: channels, 1: 0.01, 2: 0}, [], [rand(*shape)])
