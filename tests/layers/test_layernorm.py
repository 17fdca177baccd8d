import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw
from vkncnn.errors import Error

SHAPES = [(7,), (16,), (5, 13), (8, 3), (3, 6, 7), (16, 3, 5), (12, 2, 3, 5), (4, 3, 2, 5),
          (24, 4, 4), (1, 5, 5)]


def group_sizes(shape):
    """affine_size values that select each of ncnn's normalisation groupings."""
    w = shape[-1]
    sizes = {w}  # rows (the only choice for 1-D / 2-D)
    if len(shape) >= 3:
        sizes.add(int(np.prod(shape[1:])))  # whole channel
    if len(shape) == 4:
        sizes.add(shape[-1] * shape[-2])  # each (h, w) plane
    return sorted(sizes)


CASES = [(shape, size) for shape in SHAPES for size in group_sizes(shape)]


@pytest.mark.parametrize("shape,affine_size", CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_layernorm_affine(shape, affine_size):
    eps = 0.1 if affine_size % 2 else 1e-5
    weights = [raw(rand(affine_size, seed=5, lo=-2, hi=2)), raw(rand(affine_size, seed=6))]
    check_layer("LayerNorm", {0: affine_size, 1: eps, 2: 1}, weights, [rand(*shape, lo=-3, hi=3)])


@pytest.mark.parametrize("shape,affine_size", CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_layernorm_no_affine(shape, affine_size):
    check_layer("LayerNorm", {0: affine_size, 1: 1e-4, 2: 0}, [], [rand(*shape, lo=-3, hi=3)])


@pytest.mark.parametrize("shape", [(5, 13), (3, 6, 7), (4, 3, 2, 5)])
def test_layernorm_no_affine_other_sizes_normalise_channels(shape):
    # without affine any affine_size other than w (or w*h for 4-D) means "per channel"
    check_layer("LayerNorm", {0: 0, 2: 0}, [], [rand(*shape)])
    check_layer("LayerNorm", {0: 1000, 2: 0}, [], [rand(*shape)])


def test_layernorm_default_eps():
    check_layer("LayerNorm", {0: 7, 2: 0}, [], [rand(3, 6, 7, lo=-0.05, hi=0.05)])


def test_layernorm_affine_size_mismatch_raises():
    from vkncnn.format.modelbin import ModelBinFromMatArray
    from vkncnn.format.paramdict import ParamDict
    from vkncnn.layer import create_layer

    layer = create_layer("LayerNorm")
    pd = ParamDict()
    pd.set(0, 5)
    layer.load_param(pd)
    layer.load_model(ModelBinFromMatArray([np.ones(5, np.float32), np.zeros(5, np.float32)]))
    with pytest.raises(Error):
        layer.forward_cpu([rand(3, 6)], None)
