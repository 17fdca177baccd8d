import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias_term", [0, 1])
def test_scale_matches_ncnn(shape, bias_term):
    c = shape[0]
    weights = [raw(rand(c, seed=1, lo=-2, hi=2))] + ([raw(rand(c, seed=2))] if bias_term else [])
    check_layer("Scale", {0: c, 1: bias_term}, weights, [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_scale_from_second_input(shape):
    # scale_data_size = -233: the per-channel scales are the second input blob
    check_layer("Scale", {0: -233}, [], [rand(*shape), rand(shape[0], seed=5, lo=-2, hi=2)])


def test_scale_input_of_wrong_length_raises():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("Scale")
    pd = ParamDict()
    pd.set(0, -233)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([]))
    with pytest.raises(Error):
        layer.forward_cpu([rand(4, 3, 2), rand(3)], None)
    with pytest.raises(Error):  # ncnn reads a 3-D scale blob with its channel padding: refuse
        layer.forward_cpu([rand(4, 3, 2), rand(4, 1, 1)], None)


def test_scale_from_input_with_bias_is_rejected():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    pd = ParamDict()
    pd.set(0, -233)
    pd.set(1, 1)
    with pytest.raises(Error):  # ncnn would load a bias of -233 values and crash
        create_layer("Scale").load_param(pd)
