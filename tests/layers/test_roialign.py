"""ROIAlign and PSROIPooling against real ncnn over boxes inside the map, every version /
aligned / sampling_ratio; ROIPooling against its reference algorithm (see below)."""

import numpy as np
import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer


def _box(h: int, w: int, scale: float, seed: int) -> np.ndarray:
    """A box inside the map (ncnn reads outside the image when a bin sample leaves it)."""
    rng = np.random.default_rng(seed)
    x1, y1 = rng.uniform(0, w * 0.6), rng.uniform(0, h * 0.6)
    x2, y2 = rng.uniform(x1, w - 1), rng.uniform(y1, h - 1)
    return np.array([x1, y1, x2, y2], np.float32) / np.float32(scale)


SHAPES = [(1, 7, 9), (3, 12, 10), (4, 9, 15), (8, 16, 16)]


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("aligned", [0, 1])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("pooled,scale", [((3, 2), 1.0), ((5, 4), 0.5), ((1, 1), 0.25)])
def test_roialign_matches_ncnn(version, aligned, sampling_ratio, shape, pooled, scale):
    c, h, w = shape
    x = rand(*shape, seed=c)
    params = {0: pooled[0], 1: pooled[1], 2: scale, 3: sampling_ratio, 4: aligned, 5: version}
    check_layer("ROIAlign", params, [], [x, _box(h, w, scale, seed=h + w)])


@pytest.mark.parametrize("shape", [(7, 9), (1, 6, 8)])
def test_roialign_one_channel_inputs(shape):
    check_layer("ROIAlign", {0: 2, 1: 3}, [], [rand(*shape), np.array([1.0, 1.5, 5.0, 4.0], np.float32)])


@pytest.mark.parametrize("output_dim", [1, 2, 3])
@pytest.mark.parametrize("pooled", [(2, 2), (3, 1), (1, 4)])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_psroipooling_matches_ncnn(output_dim, pooled, scale):
    pw, ph = pooled
    h, w = 11, 9
    x = rand(output_dim * pw * ph, h, w, seed=output_dim)
    check_layer("PSROIPooling", {0: pw, 1: ph, 2: scale, 3: output_dim}, [], [x, _box(h, w, scale, seed=pw)])


def _roi_max_pool_reference(x, roi, pw, ph, scale):
    """Caffe's / ncnn's source algorithm, one value at a time."""
    c, h, w = x.shape
    x1, y1, x2, y2 = (int(np.floor(abs(v * scale) + 0.5) * np.sign(v * scale)) for v in roi)
    rw, rh = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
    bw, bh = np.float32(rw) / np.float32(pw), np.float32(rh) / np.float32(ph)
    out = np.zeros((c, ph, pw), np.float32)
    for i in range(ph):
        hs = min(max(y1 + int(np.floor(i * bh)), 0), h)
        he = min(max(y1 + int(np.ceil((i + 1) * bh)), 0), h)
        for j in range(pw):
            ws = min(max(x1 + int(np.floor(j * bw)), 0), w)
            we = min(max(x1 + int(np.ceil((j + 1) * bw)), 0), w)
            if he > hs and we > ws:
                out[:, i, j] = x[:, hs:he, ws:we].max(axis=(1, 2))
    return out


@pytest.mark.parametrize("shape", [(1, 9, 6), (3, 12, 16), (8, 7, 6)])
@pytest.mark.parametrize("pooled,scale", [((2, 2), 1.0), ((3, 4), 0.5), ((5, 1), 0.25)])
def test_roipooling_matches_reference(shape, pooled, scale):
    # Not against the pip wheel: ncnn 1.0.20261020 places some bin edges one pixel off its
    # own source (measured: a bin whose start p * bin is a whole number starts one pixel
    # earlier, and some ends one later), so the comparison is against the source algorithm.
    c, h, w = shape
    x = rand(*shape, seed=c)
    roi = _box(h, w, scale, seed=c + h)
    got = run_layer("ROIPooling", {0: pooled[0], 1: pooled[1], 2: scale}, [], [x, roi])[0]
    np.testing.assert_array_equal(got, _roi_max_pool_reference(x, roi, pooled[0], pooled[1], scale))


@pytest.mark.parametrize("type_name,params", [
    ("ROIAlign", {0: 0, 1: 2}), ("ROIAlign", {0: 2, 1: 2, 5: 2}), ("ROIPooling", {0: 2, 1: -1}),
    ("PSROIPooling", {0: 2, 1: 2, 3: 0})])
def test_roi_bad_params(type_name, params):
    with pytest.raises(ParamError, match=type_name):
        run_layer(type_name, params, [], [rand(4, 5, 5), np.zeros(4, np.float32)])


@pytest.mark.parametrize("type_name,x,roi", [
    ("ROIAlign", (3, 5, 5), (3,)), ("ROIAlign", (2, 3, 5, 5), (4,)), ("ROIPooling", (3, 5, 5), (4, 1, 1)),
    ("PSROIPooling", (5, 5, 5), (4,))])
def test_roi_bad_shapes(type_name, x, roi):
    params = {0: 2, 1: 2, 3: 1} if type_name == "PSROIPooling" else {0: 2, 1: 2}
    with pytest.raises(ShapeError, match=type_name):
        run_layer(type_name, params, [], [rand(*x), rand(*roi)])


@needs_gpu
def test_roialign_inside_gpu_net_matches_ncnn():
    check_layer("ROIAlign", {0: 3, 1: 3, 5: 1, 4: 1}, [], [rand(4, 9, 9), _box(9, 9, 1.0, 3)], gpu=True)


@needs_gpu
def test_psroipooling_inside_gpu_net_matches_ncnn():
    check_layer("PSROIPooling", {0: 2, 1: 2, 2: 1.0, 3: 2}, [], [rand(8, 9, 9), _box(9, 9, 1.0, 3)], gpu=True)


@needs_gpu
def test_roipooling_inside_gpu_net_matches_cpu():
    x, roi = rand(4, 9, 9), _box(9, 9, 1.0, 4)
    cpu = run_layer("ROIPooling", {0: 3, 1: 2}, [], [x, roi])[0]
    gpu = run_layer("ROIPooling", {0: 3, 1: 2}, [], [x, roi], gpu=True)[0]
    np.testing.assert_array_equal(gpu, cpu)
