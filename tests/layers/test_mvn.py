"""MVN and StatisticsPooling against real ncnn."""

import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import Error
from vkncnn.testing import run_layer

SHAPES = [(7,), (5, 13), (3, 6, 7), (1, 5, 5), (4, 3, 5), (8, 3, 5), (12, 4, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("params", [{}, {0: 1}, {1: 1}, {0: 1, 1: 1}, {0: 1, 2: 0.01}])
def test_mvn_matches_ncnn(shape, params):
    check_layer("MVN", params, [], [rand(*shape, lo=-3, hi=5)])


@pytest.mark.parametrize("params", [{}, {0: 1}, {1: 1}, {0: 1, 1: 1}])
def test_mvn_4d_normalises_each_channel_over_depth_too(params):
    check_layer("MVN", params, [], [rand(3, 2, 4, 5, lo=-3, hi=5)])


def test_mvn_refuses_5d():
    with pytest.raises(Error):
        run_layer("MVN", {}, [], [rand(2, 3, 4, 5, 2)])


@pytest.mark.parametrize("shape", SHAPES + [(3, 2, 4, 5)])
@pytest.mark.parametrize("include_stddev", [0, 1])
def test_statisticspooling_matches_ncnn(shape, include_stddev):
    check_layer("StatisticsPooling", {0: include_stddev}, [], [rand(*shape, lo=-2, hi=3)])


@needs_gpu
def test_mvn_inside_gpu_net_matches_ncnn():
    check_layer("MVN", {0: 1}, [], [rand(4, 6, 7)], gpu=True)


@needs_gpu
def test_statisticspooling_inside_gpu_net_matches_ncnn():
    check_layer("StatisticsPooling", {0: 1}, [], [rand(4, 6, 7)], gpu=True)
