import pytest

from tests.oracle import check_layer, rand

SHAPES = [(7,), (5, 6), (4, 5, 6), (3, 4, 5, 6)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n_inputs", [1, 2, 3])
def test_concat_every_axis_matches_ncnn(shape, n_inputs):
    n = len(shape)
    for axis in list(range(n)) + list(range(-n, 0)):
        a = axis + n if axis < 0 else axis
        inputs = []
        for i, extent in enumerate([3, 1, 4][:n_inputs]):
            s = list(shape)
            s[a] = extent
            inputs.append(rand(*s, seed=i))
        check_layer("Concat", {0: axis}, [], inputs)


@pytest.mark.parametrize("channels", [(4, 4), (8, 16), (3, 5), (12, 4, 8), (1, 24)])
def test_concat_channels_with_packing_matches_ncnn(channels):
    check_layer("Concat", {0: 0}, [], [rand(c, 3, 5, seed=c) for c in channels])
    check_layer("Concat", {0: 0}, [], [rand(c, 2, 3, 5, seed=c) for c in channels])
    check_layer("Concat", {0: 0}, [], [rand(c, 5, seed=c) for c in channels])
    check_layer("Concat", {0: 0}, [], [rand(c, seed=c) for c in channels])


def test_mismatched_shapes_are_an_error():
    import vkncnn
    from tests.oracle import layer_param_text, run_vkncnn

    with pytest.raises(vkncnn.Error):
        run_vkncnn(layer_param_text("Concat", {0: 0}, 2), b"", {"in0": rand(3, 4, 5), "in1": rand(3, 4, 6)}, ["out0"])
