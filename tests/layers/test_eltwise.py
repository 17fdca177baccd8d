import pytest

from tests.oracle import check_layer, rand
from vkncnn.errors import Error

SHAPES = [(7,), (5, 13), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (24, 4, 4)]
COEFFS = [0.5, -1.5, 2.0, 0.25]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", [0, 1, 2])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_eltwise_matches_ncnn(shape, op, n):
    xs = [rand(*shape, seed=s) for s in range(n)]
    check_layer("Eltwise", {0: op}, [], xs)
    # coeffs weight a sum; ncnn ignores them for prod and max
    check_layer("Eltwise", {0: op, 1: COEFFS[:n]}, [], xs)


def test_eltwise_mismatched_shapes_raise():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("Eltwise")
    pd = ParamDict()
    pd.set(0, 1)
    layer.load_param(pd)
    with pytest.raises(Error):
        layer.forward_cpu([rand(3, 4), rand(4, 3)], None)


def test_eltwise_too_few_coeffs_raise():
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("Eltwise")
    pd = ParamDict()
    pd.set(0, 1)
    pd.set(1, [1.0, 2.0])
    layer.load_param(pd)
    with pytest.raises(Error):
        layer.forward_cpu([rand(3, 4), rand(3, 4), rand(3, 4)], None)
