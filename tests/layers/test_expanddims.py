import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5), (1, 4)])
def test_expand_axes_match_ncnn(shape):
    for axes in ([0], [1], [-1], [0, 1], [0, -1], [1, 2], [0, 1, 2], [-2], [2], [0, 3], [-1, -2]):
        n_out = len(shape) + len(axes)
        if n_out <= 4 and any(not -n_out <= a < n_out for a in axes):
            continue
        check_layer("ExpandDims", {3: axes}, [], [rand(*shape)])


@pytest.mark.parametrize("flags", [{0: 1}, {1: 1}, {11: 1}, {2: 1}, {0: 1, 1: 1, 2: 1}])
def test_legacy_flags_have_no_effect_like_ncnn(flags):
    for shape in [(5,), (3, 5), (2, 3, 5)]:
        check_layer("ExpandDims", flags, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(120,), (1,), (16, 14), (1, 1), (16, 12, 3)])
@pytest.mark.parametrize("axes", [[3], [2], [0, 3], [1, 3], [2, 3], [0, 0], [3, 3]])
def test_expand_ignores_axes_outside_the_result_like_ncnn(shape, axes):
    """An axis past the result's rank is ignored, a repeated one counts once; none left: unchanged."""
    check_layer("ExpandDims", {3: axes}, [], [rand(*shape)])
