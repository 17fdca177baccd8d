import pytest

from tests.oracle import check_layer, rand

SHAPES = [(24,), (12, 7), (12, 9, 10), (8, 12, 6), (12, 5, 6, 12)]


@pytest.mark.parametrize("shape", SHAPES)
def test_slices_match_ncnn(shape):
    n = len(shape)
    for axis in list(range(n)) + [-1]:
        for slices in ([2, 3, -233], [-233, -233], [1, -233, -233, -233], [5, -233], [-233, -233, -233]):
            a = axis + n if axis < 0 else axis
            sizes_known = sum(s for s in slices if s != -233)
            if shape[a] - sizes_known < slices.count(-233):
                continue
            check_layer("Slice", {0: slices, 1: axis}, [], [rand(*shape)], n_outputs=len(slices))


@pytest.mark.parametrize("shape", SHAPES)
def test_indices_match_ncnn(shape):
    n = len(shape)
    for axis in list(range(n)) + [-2 if n > 1 else -1]:
        for indices in ([2], [1, 3], [-2], [2, -2], [1, 2, 4]):
            check_layer("Slice", {2: indices, 1: axis}, [], [rand(*shape)], n_outputs=len(indices) + 1)


@pytest.mark.parametrize("channels", [8, 12, 16, 24])
def test_channel_slices_with_packing_match_ncnn(channels):
    for slices in ([4, -233], [3, 5, -233], [-233, -233, -233, -233], [1, 7, -233]):
        if sum(s for s in slices if s > 0) >= channels:
            continue
        check_layer("Slice", {0: slices, 1: 0}, [], [rand(channels, 3, 4)], n_outputs=len(slices))
        check_layer("Slice", {0: slices, 1: 0}, [], [rand(channels, 2, 3, 4)], n_outputs=len(slices))


def test_pieces_that_do_not_fit_are_an_error():
    import vkncnn
    from tests.oracle import layer_param_text, run_vkncnn

    for params, n in [({0: [3, 5, -233]}, 3), ({0: [4, 6], 1: 0}, 2), ({2: [5, 3]}, 3)]:
        with pytest.raises(vkncnn.Error):
            run_vkncnn(layer_param_text("Slice", params, 1, n), b"", {"in0": rand(8, 3, 4)},
                       [f"out{i}" for i in range(n)])
