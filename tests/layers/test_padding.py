import itertools

import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw

PADS = [(0, 0, 0, 0), (1, 1, 1, 1), (2, 0, 1, 3), (0, 3, 2, 0), (1, 2, 0, 0)]  # top bottom left right


@pytest.mark.parametrize("pad_type", [0, 1, 2])
@pytest.mark.parametrize("shape", [(9,), (5, 7), (1, 6, 5), (3, 4, 7), (8, 5, 5), (4, 3, 4, 5), (12, 2, 4, 6)])
def test_spatial_padding_matches_ncnn(pad_type, shape):
    for t, b, left, r in PADS:
        check_layer("Padding", {0: t, 1: b, 2: left, 3: r, 4: pad_type, 5: 0.75}, [], [rand(*shape)])


@pytest.mark.parametrize("pad_type", [0, 1, 2])
@pytest.mark.parametrize("shape", [(3, 4, 7), (4, 5, 3), (8, 3, 3), (16, 2, 5), (4, 3, 4, 5), (3, 4, 2, 3)])
def test_front_behind_padding_matches_ncnn(pad_type, shape):
    for front, behind, spatial in itertools.product([0, 1, 2], [0, 1, 3], [0, 1]):
        if pad_type == 2 and max(front, behind) >= (shape[0] if len(shape) == 3 else shape[1]):
            continue  # reflect cannot reach further than the extent - 1
        params = {0: spatial, 1: spatial, 2: spatial, 3: 2 * spatial, 4: pad_type, 5: -1.5, 7: front, 8: behind}
        check_layer("Padding", params, [], [rand(*shape)])


@pytest.mark.parametrize("shape", [(3, 4, 7), (4, 5, 3), (8, 3, 3), (4, 3, 4, 5), (1, 2, 3, 3)])
@pytest.mark.parametrize("pads", [(1, 2, 0, 1, 0, 0), (0, 0, 0, 0, 1, 2), (1, 1, 1, 1, 2, 1)])
def test_per_channel_pad_values_match_ncnn(shape, pads):
    t, b, left, r, front, behind = pads
    n = shape[0] + front + behind + 4
    values = np.arange(n, dtype=np.float32) * 0.5 - 3
    params = {0: t, 1: b, 2: left, 3: r, 4: 0, 6: n, 7: front, 8: behind}
    check_layer("Padding", params, [raw(values)], [rand(*shape)])


def test_behind_defaults_to_zero():
    check_layer("Padding", {7: 2, 5: 3.0}, [], [rand(4, 3, 3)])


def test_negative_pads_are_refused():
    # ncnn crops, misplaces rows, reads garbage or crashes depending on packing: no meaning to match
    import vkncnn
    from tests.oracle import layer_param_text, run_vkncnn

    for params in [{0: -1}, {2: -1, 3: 2}, {7: -1}, {8: -1, 7: 1}]:
        with pytest.raises(vkncnn.Error, match="negative pads"):
            run_vkncnn(layer_param_text("Padding", params, 1), b"", {"in0": rand(3, 5, 6)}, ["out0"])
