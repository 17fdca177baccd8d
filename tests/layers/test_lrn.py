import pytest

from tests.oracle import check_layer, rand
from vkncnn.errors import Error

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (24, 4, 4), (1, 5, 5), (12, 9, 2)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("region_type", [0, 1])
@pytest.mark.parametrize("local_size", [1, 2, 3, 4, 5])
def test_lrn_matches_ncnn(shape, region_type, local_size):
    # even local sizes reach one element further back than forward
    x = rand(*shape, lo=-2, hi=2)
    check_layer("LRN", {0: region_type, 1: local_size, 2: 2.0, 3: 0.6, 4: 1.5}, [], [x])


@pytest.mark.parametrize("region_type", [0, 1])
def test_lrn_defaults(region_type):
    check_layer("LRN", {0: region_type}, [], [rand(8, 6, 7, lo=-2, hi=2)])
    check_layer("LRN", {}, [], [rand(8, 6, 7, lo=-2, hi=2)])


def test_lrn_4d_is_refused():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("LRN")
    layer.load_param(ParamDict())
    with pytest.raises(Error):
        layer.forward_cpu([rand(4, 3, 2, 5)], None)
