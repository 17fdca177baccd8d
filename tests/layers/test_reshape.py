import pytest

from tests.oracle import check_layer, rand

SHAPES = [(24,), (4, 6), (2, 3, 4), (2, 2, 3, 2)]
TARGETS = [  # w, h, d, c (None = param absent = -233)
    (24, None, None, None), (-1, None, None, None), (6, 4, None, None), (-1, 3, None, None), (4, -1, None, None),
    (2, 3, None, 4), (-1, 2, None, 3), (2, -1, None, 2), (3, 2, None, -1), (2, 2, 3, 2), (-1, 2, 2, 2),
    (2, 3, -1, 2), (1, 1, 24, 1), (1, 24, None, None), (4, 6, 2, None),  # c=-233 drops d too
]


@pytest.mark.parametrize("shape", SHAPES)
def test_reshape_targets_match_ncnn(shape):
    for target in TARGETS:
        params = {k: v for k, v in zip((0, 1, 11, 2), target) if v is not None}
        check_layer("Reshape", params, [], [rand(*shape)])


@pytest.mark.parametrize("shape,params", [
    ((2, 3, 4), {0: 0, 1: 0, 2: 0}), ((2, 3, 4), {0: 0, 1: -1}), ((2, 3, 4), {0: -1, 1: 0}),
    ((2, 3, 4), {0: 0, 1: 3, 2: -1}), ((2, 3, 4, 5), {0: 0, 1: 0, 11: -1, 2: 0}), ((6, 5), {0: 0, 1: 0, 2: 1}),
    ((6, 5), {0: 0, 1: 3, 2: -1}), ((30,), {0: 0, 1: 1}), ((2, 3, 4, 5), {0: 0, 1: -1, 2: 0}),
])
def test_zero_copies_input_extent(shape, params):
    check_layer("Reshape", params, [], [rand(*shape)])


@pytest.mark.parametrize("expr,inputs", [
    ("0c,-1", [(2, 3, 4)]), ("-1,0c", [(2, 3, 4)]), ("*(0w,0h),0c", [(2, 3, 4)]), ("0w,0h,1,0c", [(2, 3, 4)]),
    ("0w,*(0h,0c)", [(4, 3, 5)]), ("-1", [(2, 3, 4)]), ("//(0w,2),*(0h,2),0c", [(3, 5, 4)]),
    ("1w,-1", [(2, 3, 4), (3,)]), ("0w,0h,0d,0c", [(2, 3, 4, 5)]), ("*(0w,0h),0d,0c", [(2, 3, 4, 5)]),
])
def test_shape_expr_matches_ncnn(expr, inputs):
    check_layer("Reshape", {6: f'"{expr}"'}, [], [rand(*s) for s in inputs])


def test_bad_reshape_is_an_error():
    import vkncnn
    from tests.oracle import layer_param_text, run_vkncnn

    for params in [{0: 5, 1: 5}, {0: 5, 1: -1}, {0: 2, 1: 3, 2: 2}]:
        with pytest.raises(vkncnn.Error):
            run_vkncnn(layer_param_text("Reshape", params, 1), b"", {"in0": rand(2, 3, 4)}, ["out0"])
    with pytest.raises(vkncnn.Error):
        run_vkncnn(layer_param_text("Reshape", {}, 1), b"", {"in0": rand(2, 3, 4)}, ["out0"])
