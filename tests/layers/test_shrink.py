"""Shrink against real ncnn on every rank and on the GPU (unaryop.comp): bias (0),
lambd (1): hard shrink, soft shrink and beyond."""

import pytest

from tests.layers.unary_cases import SHAPES, unary_input
from tests.oracle import check_layer, needs_gpu
from vkncnn import testing

PARAMS = [{}, {0: 0.5}, {1: 1.2}, {0: 0.3, 1: 0.3}, {0: -0.7, 1: 2.0}, {1: 0.0}]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", PARAMS)
def test_matches_ncnn(shape, params):
    check_layer("Shrink", params, [], [unary_input(shape, seed=len(shape))])


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("shape", [(13,), (12, 5), (3, 3, 5), (8, 2, 3), (4, 2, 3, 3)])
@pytest.mark.parametrize("params", PARAMS)
def test_gpu_matches_ncnn(shape, params):
    check_layer("Shrink", params, [], [unary_input(shape, lo=-4, hi=4)], gpu=True)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("params", PARAMS)
def test_gpu_fp16_and_packing_variants(params):
    report = testing.test_layer("Shrink", params, [], [unary_input((8, 3, 5), lo=-4, hi=4, edges=False)])
    assert report.ok, str(report)
