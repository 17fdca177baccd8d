import numpy as np
import pytest

from tests.oracle import check_layer, rand

SHAPES = [(11,), (7, 9), (4, 6, 7), (8, 5, 5), (12, 3, 6), (3, 4, 5, 6), (16, 2, 3, 4)]


def _q(s):
    return f'"{s}"'


@pytest.mark.parametrize("shape", SHAPES)
def test_offsets_and_sizes_match_ncnn(shape):
    n = len(shape)
    cases = [
        {0: 1, 1: 1, 13: 1, 2: 1, 3: 2, 4: 1, 14: 1, 5: 2},
        {0: 0, 1: 0, 13: 0, 2: 0, 3: -233, 4: -233, 14: -233, 5: -233, 6: 1, 7: 1, 15: 0, 8: 1},
        {0: 2, 3: -233, 4: -233, 14: -233, 5: -233},
        {1: 1, 2: 1, 13: 1, 3: 3, 4: -233, 14: 1, 5: -233, 8: 1},
    ]
    for params in cases:
        if n == 1:
            params = {k: v for k, v in params.items() if k in (0, 3, 6)}
        check_layer("Crop", params, [], [rand(*shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_numpy_slices_match_ncnn(shape):
    n = len(shape)
    cases = [
        ([1], [-1], [0]),
        ([0], [2], [-1]),
        ([-3], [-233], [n - 1]),
        ([1], [0], [0]),            # end 0 = to the end (ncnn's rule)
        ([1], [100000], [-1]),
        ([1] * n, [-1] * n, []),     # no axes = leading axes
        ([-233, 1], [2, -233], [0, n - 1] if n > 1 else [0, 0]),
    ]
    for starts, ends, axes in cases:
        if (n == 1 and len(starts) > 1) or (len(starts) == n and min(shape) < 3):
            continue
        params = {9: starts, 10: ends}
        if axes:
            params[11] = axes
        check_layer("Crop", params, [], [rand(*shape)])


@pytest.mark.parametrize("shape,ref", [((11,), (4,)), ((7, 9), (3, 5)), ((4, 6, 7), (2, 3, 4)), ((8, 6, 7), (4, 5)),
                                       ((12, 5, 5), (3,)), ((3, 4, 5, 6), (2, 2, 3, 4)), ((4, 4, 5, 6), (3, 4, 5)),
                                       ((7, 9), (4, 3, 5))])
def test_reference_blob_matches_ncnn(shape, ref):
    offsets = {0: 1, 1: 1, 13: 1, 2: 0}
    check_layer("Crop", offsets, [], [rand(*shape), rand(*ref)])
    check_layer("Crop", {}, [], [rand(*shape), rand(*ref)])


@pytest.mark.parametrize("shape,words", [((11,), [1, 0, 0, 3, 0, 0]), ((7, 9), [1, 2, 0, 3, 2, 0]),
                                         ((6, 5, 7), [1, 2, 3, 3, 2, 2]), ((8, 5, 7), [0, 1, 4, 7, 3, 4]),
                                         ((6, 4, 5, 7), [1, 2, 1, 3, 3, 2, 2, 2])])
def test_box_from_int_words_of_second_input(shape, words):
    box = np.array(words + [0, 0], np.int32).view(np.float32)
    check_layer("Crop", {0: -233}, [], [rand(*shape), box])


@pytest.mark.parametrize("shape", [(13,), (9, 12), (8, 6, 7), (4, 5, 6, 7)])
def test_slice_expressions_match_ncnn(shape):
    n = len(shape)
    cases = [("1", "-1", "0"), ("2", "-2", "-1"), ("floor(*(0w,0.3))", "ceil(*(0w,0.9))", "-1"),
             ("1", "0", "0"), ("-233", "//(0w,2)", str(n - 1))]
    if n >= 2:
        cases.append(("1,//(0h,4)", "-1,0h", f"0,{n - 2}"))
    if n >= 3:
        cases.append(("-(0w,3),0h//2,floor(*(0c,0.3))".replace("0h//2", "//(0h,2)"),
                      "-1,0h,ceil(*(0c,0.9))", f"{n - 1},{n - 2},0"))
    for s, e, a in cases:
        check_layer("Crop", {19: _q(s), 20: _q(e), 21: _q(a)}, [], [rand(*shape)])


def test_slice_expressions_over_two_inputs():
    check_layer("Crop", {19: _q("1c"), 20: _q("-(0c,1c)"), 21: _q("-3")}, [], [rand(8, 5, 7), rand(2, 1, 1)])
    check_layer("Crop", {19: _q("+(1h,1)"), 20: _q("-(1h,6)"), 21: _q("-2")}, [], [rand(12, 9), rand(2, 2)])
    check_layer("Crop", {19: _q("1w"), 20: _q("2w"), 21: _q("-1")}, [], [rand(20), rand(3), rand(9)])


def test_box_outside_the_blob_is_an_error():
    import vkncnn
    from tests.oracle import layer_param_text, run_vkncnn

    for params in [{9: [-100], 10: [3], 11: [0]}, {9: [4], 10: [2], 11: [0]}, {0: 1, 3: 3, 4: 2}]:
        with pytest.raises(vkncnn.Error):
            run_vkncnn(layer_param_text("Crop", params, 1), b"", {"in0": rand(6, 5, 7)}, ["out0"])


EXPRESSIONS = [  # each evaluates to a start offset on a 64-long vector
    "//(0w,7)", "//(-(0w,70),7)", "trunc(/(0w,3))", "round(*(0w,0.1))", "round(2.5)", "floor(sqrt(0w))",
    "ceil(log(0w))", "max(3,//(0w,16))", "min(0w,5)", "abs(neg(7))", "sign(-(3,0w))", "square(3)",
    "fmod(0w,10)", "remainder(-7,5)", "pow(2,5)", "and(0w,7)", "or(2,1)", "xor(5,3)", "lshift(1,4)",
    "rshift(0w,2)", "atan2(1,1)", "exp(2)", "*(0w,0.5)", "+(1.5,2)", "-(0w,0.5)", "//(7.5,2)",
    "reciprocal(0.25)", "rsqrt(0.04)", "log10(1000)", "sin(1.6)", "square(2.5)", "neg(-3.5)", "1.9",
    "floor(-(0.5,1))", "ceil(-0.5)", "max(2.5,1)",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_expression_language_matches_ncnn(expr):
    check_layer("Crop", {19: _q(expr), 20: _q("-233"), 21: _q("0")}, [], [rand(64)])
