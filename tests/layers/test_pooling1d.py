import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(3, 11), (8, 16), (1, 7)])
@pytest.mark.parametrize("ptype", [0, 1])
@pytest.mark.parametrize("kernel,stride,pads,mode", [
    (2, 2, (0, 0), 0), (3, 1, (1, 1), 0), (3, 2, (1, 0), 0), (3, 2, (0, 0), 1),
    (3, 2, (0, 0), 2), (4, 3, (0, 0), 3), (5, 2, (2, 2), 1)])
@pytest.mark.parametrize("include_pad", [0, 1])
def test_pooling1d_window(shape, ptype, kernel, stride, pads, mode, include_pad):
    params = {0: ptype, 1: kernel, 2: stride, 3: pads[0], 14: pads[1], 5: mode, 6: include_pad}
    check_layer("Pooling1D", params, [], [rand(*shape)])


@pytest.mark.parametrize("ptype", [0, 1])
def test_pooling1d_global_and_adaptive(ptype):
    check_layer("Pooling1D", {0: ptype, 4: 1}, [], [rand(6, 13)])
    for out_w in (1, 3, 5):
        check_layer("Pooling1D", {0: ptype, 7: 1, 8: out_w}, [], [rand(6, 13)])
