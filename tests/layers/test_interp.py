import itertools

import numpy as np
import pytest

from tests.oracle import check_layer, needs_gpu, rand

SHAPES = [(1, 5, 7), (3, 4, 4), (4, 6, 9), (8, 7, 3), (12, 3, 5), (16, 2, 2), (3, 1, 6), (3, 9, 1)]


@pytest.mark.parametrize("resize_type", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
def test_scale_params_match_ncnn(resize_type, align_corner):
    scales = [(2.0, 2.0), (0.5, 0.5), (1.5, 1.3), (3.0, 0.7), (0.35, 2.6), (1.0, 1.7)]
    for (hs, ws), shape in itertools.product(scales, SHAPES):
        if int(np.float32(shape[1]) * np.float32(hs)) < 1 or int(np.float32(shape[2]) * np.float32(ws)) < 1:
            continue
        check_layer("Interp", {0: resize_type, 1: hs, 2: ws, 6: align_corner}, [], [rand(*shape)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
def test_output_size_params_match_ncnn(resize_type, align_corner):
    sizes = [(9, 13), (2, 3), (1, 1), (5, 4), (17, 6), (3, 1), (1, 8)]
    for (oh, ow), shape in itertools.product(sizes, SHAPES):
        check_layer("Interp", {0: resize_type, 3: oh, 4: ow, 6: align_corner}, [], [rand(*shape)])
    # one size param given: both sizes come from the scales, the given axis keeps in/out steps
    check_layer("Interp", {0: resize_type, 4: 9, 1: 1.3, 2: 1.3, 6: align_corner}, [], [rand(3, 7, 7)])
    check_layer("Interp", {0: resize_type, 3: 5, 1: 2.0, 2: 1.5, 6: align_corner}, [], [rand(3, 7, 7)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
def test_dynamic_target_size_matches_ncnn(resize_type, align_corner):
    for shape, ref in [((3, 5, 7), (1, 9, 10)), ((4, 8, 8), (2, 3, 5)), ((8, 4, 6), (7, 6)),
                       ((12, 6, 5), (11,)), ((3, 5, 7), (2, 2, 6, 13))]:
        params = {0: resize_type, 5: 1, 6: align_corner, 1: 2.0, 2: 3.0}
        check_layer("Interp", params, [], [rand(*shape), rand(*ref)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_two_dim_input_resizes_width_only(resize_type):
    for shape, params in [((5, 7), {2: 2.0}), ((4, 9), {4: 4, 3: 3}), ((6, 3), {2: 1.7, 1: 3.0})]:
        check_layer("Interp", {0: resize_type, **params}, [], [rand(*shape)])
        check_layer("Interp", {0: resize_type, 6: 1, **params}, [], [rand(*shape)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_one_dim_input_becomes_channels(resize_type):
    check_layer("Interp", {0: resize_type, 3: 3, 4: 5}, [], [rand(7)])
    check_layer("Interp", {0: resize_type, 1: 2.0, 2: 4.0}, [], [rand(4)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_four_dim_input_resizes_first_depth_slice_like_ncnn(resize_type):
    check_layer("Interp", {0: resize_type, 1: 2.0, 2: 2.0}, [], [rand(2, 3, 4, 5)])
    check_layer("Interp", {0: resize_type, 3: 5, 4: 9}, [], [rand(4, 2, 6, 6)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_size_expr_matches_ncnn(resize_type):
    check_layer("Interp", {0: resize_type, 9: '"*(0w,2),+(0h,3)"'}, [], [rand(3, 5, 7)])
    check_layer("Interp", {0: resize_type, 9: '"//(0w,2)"'}, [], [rand(4, 6, 8)])
    check_layer("Interp", {0: resize_type, 9: '"1w,1h"'}, [], [rand(3, 5, 7), rand(2, 11, 4)])


def test_same_size_is_identity():
    check_layer("Interp", {0: 2, 3: 5, 4: 7}, [], [rand(3, 5, 7)])
    check_layer("Interp", {0: 3, 1: 1.0, 2: 1.0}, [], [rand(3, 5, 7)])


@pytest.mark.parametrize("resize_type", [1, 2, 3])
@pytest.mark.parametrize("align_corner", [0, 1])
def test_tiny_inputs_match_ncnn(resize_type, align_corner):
    # bicubic's border weight shifting runs into each other below 4 pixels
    for shape in [(1, 1, 1), (2, 1, 2), (3, 2, 3), (4, 3, 2), (1, 2, 5)]:
        for oh, ow in [(1, 1), (4, 5), (7, 2), (2, 9)]:
            check_layer("Interp", {0: resize_type, 3: oh, 4: ow, 6: align_corner}, [], [rand(*shape)])
        check_layer("Interp", {0: resize_type, 1: 3.0, 2: 2.5, 6: align_corner}, [], [rand(*shape)])


@pytest.mark.parametrize("height_scale", [0.5, 0.75, 2.0])
@pytest.mark.parametrize("resize_type", [1, 2, 3])
def test_2d_blob_ignores_height_scale(height_scale, resize_type):
    """A 2-D blob keeps its rows, so a height_scale that would round one row to 0 is fine
    (found by tools/dev/layerfuzz: vkncnn raised 'output size 0x5 is not positive')."""
    check_layer("Interp", {0: resize_type, 1: height_scale, 2: 0.5}, [], [rand(1, 11)])


@pytest.mark.parametrize("shape,params,want", [
    ((3, 0, 5), {0: 1, 1: 2.0, 2: 2.0}, (3, 0, 10)), ((3, 4, 0), {0: 2, 1: 2.0, 2: 2.0}, (3, 8, 0)),
    ((0, 4, 5), {0: 2, 1: 2.0, 2: 2.0}, (0, 8, 10)), ((2, 0, 4, 5), {0: 2, 1: 2.0, 2: 2.0}, (2, 0, 8, 10)),
    ((0, 5), {0: 2, 1: 1.0, 2: 2.0}, (0, 10))])
def test_empty_input_gives_an_empty_output_like_ncnn(shape, params, want):
    """ncnn answers an empty Mat (ret 0) for an empty input whose output is empty too; vkncnn
    answers an empty array that keeps the axes. ncnn runs in a child: some empty inputs
    make it divide by zero (bicubic on a 4-D blob)."""
    from tests.oracle import layer_param_text, run_vkncnn
    from vkncnn.tools.dev.ncnn_worker import NcnnWorker

    text = layer_param_text("Interp", params, 1)
    feed = {"in0": np.zeros(shape, np.float32)}
    worker = NcnnWorker()
    try:
        kind, want_ncnn = worker.run(text, b"", feed, ["out0"], empty_dims=True)
    finally:
        worker.close()
    assert kind == "ok" and want_ncnn["out0"].size == 0
    assert run_vkncnn(text, b"", feed, ["out0"])["out0"].shape == want


def test_empty_input_to_a_fixed_size_raises():
    """A fixed output size from nothing: ncnn divides by zero (SIGFPE); vkncnn says why."""
    from tests.oracle import layer_param_text, run_vkncnn
    from vkncnn.errors import ShapeError

    with pytest.raises(ShapeError):
        run_vkncnn(layer_param_text("Interp", {0: 1, 3: 4, 4: 4}, 1), b"", {"in0": np.zeros((3, 0, 5), np.float32)},
                   ["out0"])


@needs_gpu
def test_empty_input_gives_an_empty_output_on_the_gpu_too():
    from tests.oracle import layer_param_text, run_vkncnn

    text = layer_param_text("Interp", {0: 2, 1: 2.0, 2: 2.0}, 1)
    out = run_vkncnn(text, b"", {"in0": np.zeros((3, 0, 5), np.float32)}, ["out0"], gpu=True)["out0"]
    assert out.shape == (3, 0, 10)
