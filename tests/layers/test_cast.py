import os
import tempfile

import numpy as np
import pytest

import vkncnn
from tests.oracle import check_layer, cpu_has_avx512_bf16, rand, run_ncnn, run_vkncnn
from vkncnn.errors import Error

try:
    import ncnn
except ImportError:  # pragma: no cover
    ncnn = None

SHAPES = [(7,), (16,), (5, 13), (3, 6, 7), (16, 3, 5), (4, 3, 2, 5), (24, 4, 4)]
# fp16 rounding cases: ties to even, overflow to inf, subnormal fp16, the largest finite
FP16_EDGES = np.array([1.00048828125, 1.00146484375, 1.2, 65504, 65519, 65520, -70000, 1e-6, 6e-8, 1e-9,
                       np.inf, -np.inf, -0.0, 3.14159265], np.float32)
# bf16 rounding cases: ties to even both ways, overflow to inf, subnormals flushed to zero
BF16_EDGES = np.array([1.00390625, 1.01171875, 1.2, 3.4e38, -3.4e38, 1e-40, -1e-40, 1.1754944e-38, np.inf,
                       -0.0, 3.14159265, 65536.5], np.float32)


def with_edges(shape, edges, seed=0):
    x = rand(*shape, seed=seed, lo=-70000, hi=70000)
    n = min(x.size, edges.size)
    x.ravel()[:n] = edges[:n]
    return x


def chain(first: tuple, second: tuple) -> str:
    return ("7767517\n3 3\nInput in0 0 1 in0\n"
            f"Cast c1 1 1 in0 mid 0={first[0]} 1={first[1]}\n"
            f"Cast c2 1 1 mid out0 0={second[0]} 1={second[1]}\n")


@pytest.mark.parametrize("shape", SHAPES)
def test_cast_fp32_to_fp16(shape):
    # ncnn hands an fp16 blob back to numpy as float32 values
    check_layer("Cast", {0: 1, 1: 2}, [], [with_edges(shape, FP16_EDGES)], tol=0)


def same_as_ncnn(text: str, x: np.ndarray) -> None:
    want = run_ncnn(text, b"", {"in0": x}, ["out0"])["out0"]
    got = run_vkncnn(text, b"", {"in0": x}, ["out0"])["out0"]
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("there,back", [((1, 2), (2, 1)), ((1, 4), (4, 1))])
def test_cast_round_trips(shape, there, back):
    # bf16 and fp16 -> fp32 casts need a 16-bit blob: make it with a first Cast in both engines
    same_as_ncnn(chain(there, back), rand(*shape, lo=-70000, hi=70000))


@pytest.mark.skipif(not cpu_has_avx512_bf16(), reason="without AVX512-BF16 ncnn rounds bf16 ties up")
@pytest.mark.parametrize("shape", [(16,), (16, 3, 5), (24, 4, 4), (8, 2, 2, 4)])
def test_cast_bf16_rounding_edges(shape):
    # exact ties and subnormals: x86 ncnn converts 16 lanes at a time with vcvtneps2bf16
    # (ties to even, subnormals to zero); these shapes keep every element on that path
    # (its scalar tail rounds ties up and keeps subnormals instead)
    same_as_ncnn(chain((1, 4), (4, 1)), with_edges(shape, BF16_EDGES))


@pytest.mark.parametrize("shape", SHAPES)
def test_cast_fp16_round_trip_edges(shape):
    same_as_ncnn(chain((1, 2), (2, 1)), with_edges(shape, FP16_EDGES))


def run_ncnn_int8(text: str, q: np.ndarray) -> np.ndarray:
    """run_ncnn with an int8 input Mat (run_ncnn always feeds float32)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.param")
        with open(path, "w") as f:
            f.write(text)
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        assert net.load_param(path) == 0
        ex = net.create_extractor()
        m = ncnn.Mat(np.ascontiguousarray(q)).clone()  # elemsize 1: an int8 blob
        ex.input("in0", m)
        ret, out = ex.extract("out0")
        assert ret == 0
        return np.array(out, dtype=np.float32)


@pytest.mark.parametrize("shape", [(7,), (5, 13), (3, 6, 7), (4, 3, 2, 5)])
def test_cast_int8_to_fp32(shape):
    # our blobs are float32 already, holding the int8 values
    q = np.random.default_rng(0).integers(-128, 128, size=shape).astype(np.int8)
    text = "7767517\n2 2\nInput in0 0 1 in0\nCast c 1 1 in0 out0 0=3 1=1\n"
    got = run_vkncnn(text, b"", {"in0": q.astype(np.float32)}, ["out0"])["out0"]
    assert np.array_equal(got, run_ncnn_int8(text, q))


@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_cast_same_type_is_identity(t):
    x = rand(3, 4, 5)
    check_layer("Cast", {0: t, 1: t}, [], [x], tol=0)


@pytest.mark.parametrize("pair", [(1, 3), (2, 4), (4, 2), (0, 1), (2, 3)])
def test_cast_unsupported_pairs_raise(pair):
    # ncnn leaves the output uninitialised for these; we refuse to invent values
    text = f"7767517\n2 2\nInput in0 0 1 in0\nCast c 1 1 in0 out0 0={pair[0]} 1={pair[1]}\n"
    net = vkncnn.Net()
    net.load_param_mem(text)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(rand(3, 4)))
        with pytest.raises(Error):
            ex.extract("out0")
