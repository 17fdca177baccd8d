"""CopyTo, DeepCopy and Packing against real ncnn."""

import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer

COPYTO = [
    ((9,), (4,), {0: 3}),
    ((9,), (4,), {9: [-5]}),
    ((6, 7), (2, 3), {0: 1, 1: 2}),
    ((6, 7), (2, 3), {9: [2, 4], 11: [0, 1]}),
    ((5, 6, 7), (2, 3, 4), {0: 1, 1: 2, 2: 3}),
    ((5, 6, 7), (2, 3, 4), {9: [-2], 11: [0]}),
    ((5, 6, 7), (5, 6, 7), {0: 1}),  # same shape: the source itself
    ((4, 3, 6, 7), (2, 2, 3, 4), {0: 1, 1: 2, 13: 1, 2: 1}),
    ((4, 3, 6, 7), (2, 2, 3, 4), {9: [1, 1, 2, 3], 11: [0, 1, 2, 3]}),
    ((12, 4, 4), (3, 4, 4), {2: 8}),
]


@pytest.mark.parametrize("dst,src,params", COPYTO)
def test_copyto_matches_ncnn(dst, src, params):
    check_layer("CopyTo", params, [], [rand(*dst), rand(*src, seed=1)])


@pytest.mark.parametrize("dst,src,params", [((5, 6, 7), (2, 3, 4), {0: 5}), ((5, 6, 7), (2, 3, 4), {2: 4}),
                                            ((6, 7), (1, 2, 3), {}), ((9,), (4,), {0: -1})])
def test_copyto_refuses_what_does_not_fit(dst, src, params):
    with pytest.raises(ShapeError, match="CopyTo"):
        run_layer("CopyTo", params, [], [rand(*dst), rand(*src)])


@pytest.mark.parametrize("shape", [(7,), (5, 13), (3, 6, 7), (12, 2, 3, 5)])
def test_deepcopy_matches_ncnn(shape):
    check_layer("DeepCopy", {}, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(7,), (8, 3), (3, 6, 7), (12, 4, 4), (4, 2, 3, 5)])
@pytest.mark.parametrize("out_elempack", [1, 4, 8])
def test_packing_matches_ncnn(shape, out_elempack):
    check_layer("Packing", {0: out_elempack}, [], [rand(*shape)])


def test_packing_bad_params_and_padding():
    with pytest.raises(ParamError, match="out_elempack"):
        run_layer("Packing", {0: 3}, [], [rand(4, 4)])
    with pytest.raises(ShapeError, match="use_padding"):
        run_layer("Packing", {0: 4, 1: 1}, [], [rand(3, 4, 4)])
    with pytest.raises(ShapeError, match="use_padding"):
        run_layer("Packing", {0: 8, 1: 1}, [], [rand(3, 2, 4, 5)])


@needs_gpu
def test_copyto_inside_gpu_net_matches_ncnn():
    check_layer("CopyTo", {0: 1, 1: 2, 2: 3}, [], [rand(5, 6, 7), rand(2, 3, 4, seed=1)], gpu=True)


@needs_gpu
def test_deepcopy_and_packing_inside_gpu_net_match_ncnn():
    check_layer("DeepCopy", {}, [], [rand(4, 6, 7)], gpu=True)
    check_layer("Packing", {0: 4}, [], [rand(4, 6, 7)], gpu=True)
