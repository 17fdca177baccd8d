import pytest

from tests.oracle import check_layer, rand


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (2, 3, 4, 5), (16, 3, 3)])
def test_noop_passes_through(shape):
    check_layer("Noop", {}, [], [rand(*shape)])


def test_noop_with_two_blobs():
    check_layer("Noop", {}, [], [rand(3, 4), rand(2, 3, 5)], n_outputs=2)
