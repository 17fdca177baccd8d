"""GridSample against real ncnn: every sample type x padding mode x align_corner x
permute_fusion, 2-D images and 3-D volumes, odd sizes, grids reaching outside [-1, 1]."""

import numpy as np
import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer


def _grid(shape, permute: bool, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed).uniform(-1.3, 1.3, shape).astype(np.float32)
    return np.ascontiguousarray(np.moveaxis(g, -1, 0)) if permute else g


@pytest.mark.parametrize("sample_type", [1, 2, 3])
@pytest.mark.parametrize("padding_mode", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
@pytest.mark.parametrize("permute", [0, 1])
@pytest.mark.parametrize("c,h,w,outh,outw", [(1, 5, 7, 4, 6), (12, 3, 4, 7, 2)])
def test_gridsample_2d_matches_ncnn(sample_type, padding_mode, align_corner, permute, c, h, w, outh, outw):
    x = rand(c, h, w, seed=c)
    g = _grid((outh, outw, 2), permute, seed=h * w)
    check_layer("GridSample", {0: sample_type, 1: padding_mode, 2: align_corner, 3: permute}, [], [x, g])


@pytest.mark.parametrize("sample_type", [1, 2])
@pytest.mark.parametrize("padding_mode", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
@pytest.mark.parametrize("permute", [0, 1])
@pytest.mark.parametrize("c,d,h,w,out", [(3, 4, 5, 7, (3, 4, 6)), (8, 2, 3, 3, (2, 5, 3))])
def test_gridsample_3d_matches_ncnn(sample_type, padding_mode, align_corner, permute, c, d, h, w, out):
    x = rand(c, d, h, w, seed=d)
    g = _grid(out + (3,), permute, seed=c)
    check_layer("GridSample", {0: sample_type, 1: padding_mode, 2: align_corner, 3: permute}, [], [x, g])


def test_gridsample_identity_grid_reproduces_input():
    x = rand(2, 4, 5)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    g = np.stack([xs, ys], axis=-1).astype(np.float32)
    out = run_layer("GridSample", {0: 1, 2: 1}, [], [x, g])[0]
    np.testing.assert_allclose(out, x, atol=1e-5)


@pytest.mark.parametrize("params", [{0: 0}, {0: 4}, {1: 0}, {1: 4}])
def test_gridsample_bad_modes_are_param_errors(params):
    with pytest.raises(ParamError, match="GridSample"):
        run_layer("GridSample", params, [], [rand(1, 3, 3), rand(2, 2, 2)])


@pytest.mark.parametrize("x,g,params", [
    ((2, 3, 3), (2, 2, 3), {}),            # grid last axis is not 2
    ((2, 3, 3), (2, 2, 2), {3: 1}),        # permute_fusion wants (2, outh, outw): fine shape-wise...
    ((2, 3, 3), (4, 2), {}),               # grid rank
    ((5, 3), (2, 2, 2), {}),               # 2-D input
    ((2, 2, 3, 3), (1, 2, 2, 3), {0: 3}),  # no 3-D bicubic
])
def test_gridsample_bad_shapes_are_shape_errors(x, g, params):
    if params == {3: 1}:
        g = (3, 2, 2)
    with pytest.raises(ShapeError, match="GridSample"):
        run_layer("GridSample", params, [], [rand(*x), rand(*g)])


@needs_gpu
def test_gridsample_inside_gpu_net_matches_ncnn():
    check_layer("GridSample", {0: 3, 1: 3}, [], [rand(4, 6, 7), _grid((5, 4, 2), False, 1)], gpu=True)


@pytest.mark.parametrize("h,w", [(2, 1), (5, 2), (3, 3)])
def test_gridsample_bicubic_reflection_align_corner_clamps_far_taps(h, w):
    """Bicubic taps reach 2 pixels past the sampled one: on 1-2 pixel wide images, or with
    grid values past +-1, one mirror about the edge centres is not enough (3 -> -1 for w=2)
    and ncnn clamps the mirrored tap to the edge. The grid keeps each channel's points below
    8, where ncnn's x86 build takes its scalar code (its AVX code reads outside the plane
    there: tools/dev/layerfuzz/known.py)."""
    x = rand(3, h, w, seed=w)
    g = _grid((7, 3, 2), False, seed=h)
    g[..., 0] *= 1.2  # reach further past the edges
    check_layer("GridSample", {0: 3, 1: 3, 2: 1}, [], [x, g], tol=2e-5)
