import numpy as np
import pytest

from tests.oracle import check_layer, rand, raw, tagged

SHAPES = [  # w, h, d, c -> numpy shape
    ({0: 7}, (7,)), ({0: 5, 1: 3}, (3, 5)), ({0: 4, 1: 3, 2: 2}, (2, 3, 4)), ({0: 4, 1: 3, 11: 2, 2: 5}, (5, 2, 3, 4)),
    ({0: 768, 1: 1}, (1, 768)), ({0: 1, 1: 1, 2: 16}, (16, 1, 1)),
]


@pytest.mark.parametrize("params,shape", SHAPES)
def test_raw_data_matches_ncnn(params, shape):
    data = rand(*shape)
    check_layer("MemoryData", params, [raw(data)], [])


@pytest.mark.parametrize("params,shape", SHAPES)
def test_tagged_data_with_load_type_0_matches_ncnn(params, shape):
    data = rand(*shape, seed=3)
    check_layer("MemoryData", {**params, 21: 0}, [tagged(data)], [])


def test_memorydata_feeding_another_layer():
    from tests.oracle import bin_bytes, run_ncnn, run_vkncnn

    data = rand(3, 4, 5)
    text = ("7767517\n3 3\nInput in0 0 1 in0\nMemoryData md 0 1 md 0=5 1=4 2=3\n"
            "Concat cat 2 1 in0 md out0 0=0\n")
    feed = {"in0": rand(2, 4, 5)}
    want = run_ncnn(text, bin_bytes([raw(data)]), feed, ["out0"])["out0"]
    got = run_vkncnn(text, bin_bytes([raw(data)]), feed, ["out0"])["out0"]
    np.testing.assert_allclose(got, want, rtol=0, atol=0)


def test_no_shape_reads_nothing_and_gives_one_value():
    from tests.oracle import layer_param_text, run_vkncnn

    out = run_vkncnn(layer_param_text("MemoryData", {}, 0), b"", {}, ["out0"])["out0"]
    assert out.shape == (1,)
