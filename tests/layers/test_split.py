import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(7,), (5, 6), (4, 5, 6), (3, 4, 5, 6), (16, 3, 3)])
@pytest.mark.parametrize("n_outputs", [1, 2, 3])
def test_split_copies_to_every_output(shape, n_outputs):
    check_layer("Split", {}, [], [rand(*shape)], n_outputs=n_outputs)
