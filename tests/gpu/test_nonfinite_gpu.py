"""NaN and infinity: every layer with a shader gives, on the GPU, the NaN and the infinities
the numpy path gives (docs/semantics.md), and empty inputs give the same shapes or a clear error.

Each case runs one layer on the numpy path and on the GPU (fp32 storage pack1 and pack4, fp16
storage pack4) on inputs that hold NaN, +inf and -inf among ordinary values: densely
("mixed", nearly every window and row gets some), one of each ("sparse", most windows and
rows stay finite, so a NaN that vanishes or spreads shows), and all NaN. The NaN masks must
be equal, the infinities equal (sign included), the finite values close. fp16 storage is
compared with the numpy result rounded to fp16 (a finite value beyond 65504 is inf there: the
format, not the arithmetic).

Not covered here: 3x3 stride-1 convolutions large enough for Winograd (numpy path: >= 32
channels and 14x14 outputs; GPU: a discrete device's own choice) spread a non-finite input to
their whole output tile, with tiles that differ between the paths (docs/semantics.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from tests.oracle import needs_gpu
from vkncnn.errors import Error
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.testing import FP16_TOLERANCE, random_layer_weights, random_net_weights, run_layer

# numpy warns about every invalid operation on the NaN inputs: they are the point here
pytestmark = [needs_gpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

NAN, INF = np.float32(np.nan), np.float32(np.inf)
MODES = ("mixed", "sparse", "allnan")
VARIANTS = [(False, False), (False, True), (True, True)]  # (fp16 storage, packing)
FP32_TOLERANCE = 2e-4  # a few reductions sum in another order than numpy's


def poisoned(shape, mode: str, seed: int) -> np.ndarray:
    """Values in [-1.5, 1.5] (exact in fp16) with NaN / +inf / -inf placed by `mode`; the
    positions move with `seed`, so that two inputs of a layer hold them in different places."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, shape).astype(np.float16).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    if mode == "allnan":
        flat[:] = NAN
    elif mode == "mixed":
        flat[seed % 5::5] = NAN
        flat[(seed + 2) % 7::7] = INF
        flat[(seed + 3) % 11::11] = -INF
    elif n:
        flat[(n // 3 + 2 * seed) % n] = NAN
        flat[((2 * n) // 3 + 3 * seed) % n] = INF
        flat[(n - 1 - seed) % n] = -INF
    return x


def assert_same_nonfinite(got: np.ndarray, want: np.ndarray, tol: float, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != numpy {want.shape}"
    for name, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        g, w = test(got), test(want)
        if not np.array_equal(g, w):
            at = np.argwhere(g != w)[:4].tolist()
            raise AssertionError(f"{what}: {name} differs at {int((g != w).sum())} of {got.size} positions, "
                                 f"e.g. {at}: GPU {got[g != w][:4]} numpy {want[g != w][:4]}")
    finite = np.isfinite(want)
    if finite.any():
        scale = max(1.0, float(np.abs(want[finite]).max()))
        err = float(np.abs(got[finite].astype(np.float64) - want[finite]).max()) / scale
        assert err <= tol, f"{what}: finite values differ by {err:.3g} > {tol}"


def check_layer(type_name: str, params: dict, shapes, weights=None, n_outputs: int = 1, modes=MODES,
                fixed=None, variants=VARIANTS) -> None:
    """`shapes`: one per poisoned input; `fixed`: inputs appended unpoisoned (e.g. cos / sin)."""
    fixed = list(fixed or [])
    if weights is None:
        weights = random_layer_weights(type_name, params, len(shapes) + len(fixed), n_outputs)
    for mode in modes:
        inputs = [poisoned(s, mode, seed=i + 1) for i, s in enumerate(shapes)] + fixed
        want32 = run_layer(type_name, params, weights, inputs, n_outputs)
        for fp16, packing in variants:
            what = f"{type_name} {params} {[tuple(s) for s in shapes]} {mode} fp16={fp16} packing={packing}"
            ins = [x.astype(np.float16).astype(np.float32) for x in inputs] if fp16 else inputs
            want = run_layer(type_name, params, weights, ins, n_outputs) if fp16 else want32
            got = run_layer(type_name, params, weights, ins, n_outputs, gpu=True, fp16=fp16, packing=packing)
            for g, w in zip(got, want):
                if fp16:
                    with np.errstate(over="ignore"):
                        w = w.astype(np.float16).astype(np.float32)
                assert_same_nonfinite(g, w, FP16_TOLERANCE if fp16 else FP32_TOLERANCE, what)


# -- the cases: representative params of every layer type that has a shader ---------------------
C3 = (8, 5, 6)      # a (c, h, w) blob, pack4-able
ODD = (3, 5, 7)     # neither pack4 nor a multiple of 4 scalars: the scalar shader variants

UNARY = [
    ("AbsVal", {}), ("BNLL", {}), ("CELU", {0: 0.7}), ("Clip", {0: -0.5, 1: 0.8}), ("ELU", {0: 0.3}),
    ("Erf", {}), ("Exp", {}), ("Exp", {0: 2.0, 1: 0.5, 2: 0.1}), ("Exp", {1: 0.0, 2: 0.5}),
    ("GELU", {}), ("GELU", {0: 1}), ("HardSigmoid", {}), ("HardSigmoid", {0: 0.0, 1: 0.5}),
    ("HardSwish", {}), ("HardSwish", {0: 0.0, 1: 0.5}), ("Log", {}), ("Log", {0: 10.0, 1: 2.0, 2: 0.5}),
    ("Mish", {}), ("Power", {0: 2.0, 1: 0.5, 2: 0.1}), ("Power", {0: 0.5}), ("Power", {0: 3.0, 1: 0.0, 2: 1.0}),
    ("ReLU", {}), ("ReLU", {0: 0.1}), ("SELU", {}), ("Shrink", {}), ("Shrink", {0: 0.3, 1: 0.5}),
    ("Sigmoid", {}), ("Softplus", {}), ("Swish", {}), ("TanH", {}), ("Threshold", {0: 0.2}),
    ("Dropout", {}), ("Dropout", {0: 0.5}), ("Dropout", {0: 0.0}),
    ("Cast", {0: 1, 1: 2}), ("Cast", {0: 1, 1: 4}),
] + [("UnaryOp", {0: op}) for op in range(28)]


@pytest.mark.parametrize("type_name,params", UNARY, ids=lambda v: str(v))
def test_elementwise_one_input(type_name, params):
    check_layer(type_name, params, [C3])
    check_layer(type_name, params, [ODD], modes=("mixed",), variants=[(False, False), (True, False)])


AFFINE = [("BatchNorm", {0: 8}), ("Bias", {0: 8}), ("Scale", {0: 8, 1: 1}), ("PReLU", {0: 8}), ("PReLU", {0: 1})]


@pytest.mark.parametrize("type_name,params", AFFINE, ids=lambda v: str(v))
def test_per_channel_affine(type_name, params):
    check_layer(type_name, params, [C3])


@pytest.mark.parametrize("op", range(19))
def test_binaryop(op):
    check_layer("BinaryOp", {0: op}, [C3, C3])
    check_layer("BinaryOp", {0: op}, [C3, (8, 1, 1)], modes=("mixed", "sparse"))
    check_layer("BinaryOp", {0: op, 1: 1, 2: 0.7}, [C3], modes=("mixed",))


@pytest.mark.parametrize("op,b", [(0, 0.0), (2, 0.0), (3, 0.0), (4, 0.0), (5, 0.0), (6, 0.0), (7, 0.0), (9, 0.0)])
def test_binaryop_with_a_zero_scalar(op, b):
    # a specialization constant 0: drivers fold x * 0 into 0, numpy has inf * 0 = nan
    check_layer("BinaryOp", {0: op, 1: 1, 2: b}, [C3], modes=("mixed",))


@pytest.mark.parametrize("params,n", [({0: 0}, 2), ({0: 1}, 3), ({0: 1, 1: [0.5, -2.0]}, 2), ({0: 2}, 2), ({0: 2}, 3)],
                         ids=str)
def test_eltwise(params, n):
    check_layer("Eltwise", params, [C3] * n)


POOLING = [
    {0: 0, 1: 2, 2: 2}, {0: 0, 1: 3, 2: 2}, {0: 0, 1: 3, 2: 1, 3: 1}, {0: 0, 1: 3, 2: 2, 5: 2},
    {0: 0, 4: 1}, {0: 0, 7: 1, 8: 3, 18: 2}, {0: 1, 1: 3, 2: 2}, {0: 1, 1: 3, 2: 1, 3: 1, 6: 0},
    {0: 1, 4: 1}, {0: 1, 7: 1, 8: 3, 18: 2},
]


@pytest.mark.parametrize("params", POOLING, ids=str)
def test_pooling(params):
    check_layer("Pooling", params, [C3])


def test_max_pooling_keeps_nan_of_its_window():
    # the example that started it: GLSL's max(nan, 1) may be 1
    x = np.array([[[NAN, 1.0], [0.0, INF]], [[1.0, 2.0], [-INF, 0.5]]], np.float32)
    for gpu, fp16 in ((False, False), (True, False), (True, True)):
        got = run_layer("Pooling", {0: 0, 1: 2, 2: 2}, [], [x], gpu=gpu, fp16=fp16)[0]
        assert np.isnan(got[0, 0, 0]) and got[1, 0, 0] == 2.0, (gpu, fp16, got)


@pytest.mark.parametrize("op", range(11))
def test_reduction(op):
    check_layer("Reduction", {0: op, 1: 1, 5: 1}, [C3])
    check_layer("Reduction", {0: op, 1: 0, 3: [1, 2], 4: 1, 5: 1}, [C3])
    check_layer("Reduction", {0: op, 1: 0, 3: [0], 5: 1}, [C3], modes=("sparse",))


@pytest.mark.parametrize("params,shape", [({0: 0, 1: 1}, C3), ({0: 1, 1: 1}, C3), ({0: 2, 1: 1}, C3),
                                          ({0: 0, 1: 1}, (12,)), ({0: 1, 1: 1}, (4, 9))], ids=str)
def test_softmax(params, shape):
    check_layer("Softmax", params, [shape])


def test_softmax_rows_of_inf():
    # a +inf or a NaN makes numpy's whole row NaN (inf - inf), all -inf too; a -inf among finite values is 0
    x = np.array([[1.0, INF, 0.5], [NAN, 1.0, 2.0], [-INF, -INF, -INF], [-INF, 0.0, 1.0], [1.0, 2.0, 3.0]], np.float32)
    want = run_layer("Softmax", {0: 1, 1: 1}, [], [x])[0]
    assert np.isnan(want[:3]).all() and np.isfinite(want[3:]).all() and want[3, 0] == 0
    for fp16, packing in VARIANTS:
        got = run_layer("Softmax", {0: 1, 1: 1}, [], [x], gpu=True, fp16=fp16, packing=packing)[0]
        assert_same_nonfinite(got, want, FP16_TOLERANCE if fp16 else FP32_TOLERANCE, f"fp16={fp16}")


@pytest.mark.parametrize("how", ["workgroup", "shared-memory", "segments"])
def test_row_reducer_merges_keep_nan(how, monkeypatch):
    # rows.py's other work shapes: states merged across invocations, subgroups and segments
    monkeypatch.setattr(rows, "PER_THREAD_MAX_K", 0)
    monkeypatch.setattr(rows, "MANY_ROWS", 1 << 30)
    if how == "shared-memory":
        monkeypatch.setattr(rows, "FORCE_SHARED_MEMORY", True)
    if how == "segments":
        monkeypatch.setattr(rows, "SEGMENT_LEN", 16)
        monkeypatch.setattr(rows, "SPLIT_MAX_ROWS", 1 << 20)
    long_rows = (3, 200)
    for params in ({0: 4, 1: 0, 3: [1], 5: 1}, {0: 5, 1: 0, 3: [1], 5: 1}):
        check_layer("Reduction", params, [long_rows], variants=[(False, True)])
    check_layer("Softmax", {0: 1, 1: 1}, [long_rows], variants=[(False, True)])
    check_layer("LayerNorm", {0: 200, 1: 1e-5, 2: 0}, [long_rows], variants=[(False, True)])


NORMS = [
    ("LayerNorm", {0: 6, 1: 1e-5, 2: 1}, C3), ("LayerNorm", {0: 30, 1: 1e-5, 2: 0}, C3),
    ("GroupNorm", {0: 2, 1: 8, 2: 1e-5, 3: 1}, C3), ("InstanceNorm", {0: 8, 1: 1e-5, 2: 1}, C3),
    ("RMSNorm", {0: 6, 1: 1e-6, 2: 1}, C3),
    ("Normalize", {0: 0, 1: 0, 2: 1e-4, 3: 8, 4: 1, 9: 0}, C3),
    ("Normalize", {0: 0, 1: 0, 2: 1e-2, 3: 8, 4: 1, 9: 1}, C3),
    ("Normalize", {0: 1, 1: 1, 2: 1e-2, 3: 1, 4: 0, 9: 2}, C3),
    ("Normalize", {0: 1, 1: 0, 2: 1e-2, 3: 8, 4: 1, 9: 1}, C3),
    ("LRN", {0: 0, 1: 3, 2: 0.7, 3: 0.75, 4: 2.0}, C3), ("LRN", {0: 1, 1: 3, 2: 0.5, 3: 0.5, 4: 1.0}, C3),
    ("LRN", {0: 0, 1: 3, 2: 1.0, 3: 0.75, 4: 0.0}, C3),
]


@pytest.mark.parametrize("type_name,params,shape", NORMS, ids=str)
def test_normalisations(type_name, params, shape):
    check_layer(type_name, params, [shape])


ACTIVATIONS = [{}, {9: 1}, {9: 2, 10: [0.1]}, {9: 2, 10: [0.0]}, {9: 3, 10: [-0.5, 0.8]}, {9: 4}, {9: 5},
               {9: 6, 10: [0.2, 0.5]}, {9: 6, 10: [0.0, 0.5]}]


@pytest.mark.parametrize("act", ACTIVATIONS, ids=str)
def test_convolution_family(act):
    conv = [
        ("Convolution", {0: 8, 1: 3, 4: 1, 5: 1, 6: 8 * 8 * 9}, (8, 6, 7)),
        ("Convolution", {0: 6, 1: 1, 5: 1, 6: 6 * 8}, (8, 6, 7)),
        ("Convolution", {0: 5, 1: 3, 3: 2, 5: 1, 6: 5 * 3 * 9}, (3, 9, 8)),
        ("ConvolutionDepthWise", {0: 8, 1: 3, 4: 1, 5: 1, 6: 8 * 9, 7: 8}, (8, 6, 7)),
        ("Deconvolution", {0: 4, 1: 3, 3: 2, 5: 1, 6: 4 * 8 * 9}, (8, 4, 5)),
        ("DeconvolutionDepthWise", {0: 8, 1: 3, 3: 2, 5: 1, 6: 8 * 9, 7: 8}, (8, 4, 5)),
        ("Convolution1D", {0: 6, 1: 3, 4: 1, 5: 1, 6: 6 * 8 * 3}, (8, 11)),
        ("ConvolutionDepthWise1D", {0: 8, 1: 3, 4: 1, 5: 1, 6: 8 * 3, 7: 8}, (8, 11)),
        ("Deconvolution1D", {0: 4, 1: 3, 3: 2, 5: 1, 6: 4 * 8 * 3}, (8, 6)),
        ("DeconvolutionDepthWise1D", {0: 8, 1: 3, 3: 2, 5: 1, 6: 8 * 3, 7: 8}, (8, 6)),
        ("InnerProduct", {0: 10, 1: 1, 2: 10 * 240}, C3),
        ("InnerProduct", {0: 10, 1: 1, 2: 10 * 6}, (5, 6)),
    ]
    for type_name, params, shape in conv:
        check_layer(type_name, {**params, **act}, [shape])


@pytest.mark.parametrize("profile", ["gpuD", "gpuT"])
def test_convolution_kernels_of_discrete_gpus(profile):
    # the direct kernel and the tiled one with split-K, as a discrete GPU takes them (no Winograd:
    # stride 2 and 1x1/5x5 kernels)
    from vkncnn.tools.dev.layerfuzz.discrete import device_profile

    with device_profile(profile):
        for params, shape in (({0: 8, 1: 3, 3: 2, 4: 1, 5: 1, 6: 8 * 8 * 9, 9: 1}, (8, 9, 9)),
                              ({0: 16, 1: 1, 5: 1, 6: 16 * 24, 9: 3, 10: [-0.5, 0.8]}, (24, 5, 6)),
                              ({0: 4, 1: 5, 4: 2, 5: 1, 6: 4 * 8 * 25}, (8, 7, 7))):
            check_layer("Convolution", params, [shape], variants=[(False, True), (True, True)])


@pytest.mark.parametrize("type_name,params,shapes", [
    ("Gemm", {}, [(6, 5), (5, 7)]),
    ("Gemm", {0: 0.5, 1: 0.0, 2: 0, 3: 1}, [(6, 5), (7, 5), (6, 7)]),
    ("Gemm", {1: 1.0}, [(6, 5), (5, 7), (6, 7)]),
    ("MatMul", {}, [(6, 5), (5, 7)]),
    ("MatMul", {}, [(2, 6, 5), (2, 5, 7)]),
    ("MatMul", {}, [(9,), (9, 4)]),
], ids=str)
def test_matrix_products(type_name, params, shapes):
    check_layer(type_name, params, shapes)


@pytest.mark.parametrize("params,shapes", [
    ({0: 8, 1: 2, 2: 64, 3: 8, 4: 8}, [(5, 8)]),
    ({0: 8, 1: 2, 2: 64, 3: 6, 4: 4}, [(5, 8), (7, 6), (7, 4)]),
    ({0: 8, 1: 2, 2: 64, 3: 8, 4: 8, 5: 1}, [(5, 8), (7, 8), (7, 8), (5, 7)]),
], ids=str)
def test_multiheadattention(params, shapes):
    check_layer("MultiHeadAttention", params, shapes)


@pytest.mark.parametrize("params,shapes", [
    ({}, [(4, 5, 8), (2, 7, 8), (2, 7, 6)]),
    ({5: 1}, [(2, 5, 8), (2, 7, 8), (2, 7, 6), (5, 7)]),
], ids=str)
def test_sdpa(params, shapes, monkeypatch):
    from vkncnn.layers import sdpa

    check_layer("SDPA", params, shapes)
    # a workgroup per softmax row (long rows), its states merged
    monkeypatch.setattr(sdpa, "SOFTMAX_PER_THREAD_MAX_LEN", 0)
    check_layer("SDPA", params, shapes, variants=[(False, True)])


def test_attention_masks_with_infinities():
    # masks carry -inf: a row masked off entirely is NaN (numpy's 0 / 0); a +inf poisons its row
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((2, 4, 8), (2, 5, 8), (2, 5, 8)))
    mask = np.zeros((4, 5), np.float32)
    mask[0, 1:] = -INF
    mask[1, :] = -INF
    mask[2, 3] = INF
    mha = {0: 8, 1: 2, 2: 64, 3: 8, 4: 8, 5: 1}
    mha_weights = random_layer_weights("MultiHeadAttention", mha, 4)
    for type_name, params, weights, inputs in (("SDPA", {5: 1}, b"", [q, k, v, mask]),
                                               ("MultiHeadAttention", mha, mha_weights, [q[0], k[0], v[0], mask])):
        want = run_layer(type_name, params, weights, inputs)[0]
        assert np.isnan(want[..., 1:3, :]).all() and np.isfinite(want[..., 0, :]).all()
        for fp16, packing in VARIANTS:
            got = run_layer(type_name, params, weights, inputs, gpu=True, fp16=fp16, packing=packing)[0]
            assert_same_nonfinite(got, want, FP16_TOLERANCE if fp16 else FP32_TOLERANCE,
                                  f"{type_name} fp16={fp16} packing={packing}")


def test_rotaryembed():
    ang = np.random.default_rng(0).uniform(0, 6.28, (5, 4))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    for interleaved in (0, 1):
        check_layer("RotaryEmbed", {0: interleaved}, [(3, 5, 8)], fixed=[cos, sin])


SHAPE_LAYERS = [
    ("Concat", {0: 0}, [C3, (4, 5, 6)], 1), ("Concat", {0: 2}, [C3, (8, 5, 3)], 1),
    ("Slice", {0: [-233, -233], 1: 0}, [C3], 2), ("Split", {}, [C3], 2),
    ("Crop", {0: 1, 1: 1, 3: 3, 4: 2, 5: -233}, [C3], 1), ("Crop", {2: 2, 3: -233, 4: -233, 5: 4}, [C3], 1),
    ("Padding", {0: 1, 1: 1, 2: 2, 3: 1, 4: 0, 5: -0.5}, [C3], 1), ("Padding", {0: 1, 1: 2, 2: 1, 3: 1, 4: 1}, [C3], 1),
    ("Padding", {0: 1, 1: 1, 2: 2, 3: 2, 4: 2}, [C3], 1), ("Padding", {7: 4, 8: 0, 4: 0}, [C3], 1),
    ("Permute", {0: 3}, [C3], 1), ("Permute", {0: 1}, [(5, 6)], 1), ("Reshape", {0: -1}, [C3], 1),
    ("Reshape", {0: 10, 1: 24}, [C3], 1), ("Flatten", {}, [C3], 1), ("Squeeze", {1: 1}, [(8, 1, 6)], 1),
    ("ExpandDims", {3: [0]}, [(5, 6)], 1), ("Tile", {2: [2, 1, 3]}, [C3], 1),
    ("ShuffleChannel", {0: 2}, [C3], 1), ("PixelShuffle", {0: 2}, [C3], 1), ("Reorg", {0: 2}, [(4, 6, 8)], 1),
    ("Interp", {0: 1, 1: 2.0, 2: 2.0}, [C3], 1), ("Interp", {0: 2, 3: 9, 4: 7}, [C3], 1),
    ("Interp", {0: 2, 3: 9, 4: 7, 6: 1}, [C3], 1), ("Interp", {0: 3, 1: 1.5, 2: 1.5}, [C3], 1),
    ("Interp", {0: 2, 1: 1.0, 2: 2.0}, [(5, 6)], 1), ("Noop", {}, [C3], 1),
]


@pytest.mark.parametrize("type_name,params,shapes,n_outputs", SHAPE_LAYERS, ids=str)
def test_data_movement_and_resampling(type_name, params, shapes, n_outputs):
    check_layer(type_name, params, shapes, n_outputs=n_outputs)


def test_memorydata_and_priorbox():
    data = poisoned((4, 5, 6), "mixed", 7)
    check_layer("MemoryData", {0: 6, 1: 5, 2: 4}, [], weights=[data], modes=("mixed",))
    feat, image = np.zeros((4, 3, 5), np.float32), np.zeros((3, 60, 80), np.float32)
    feat[0, 0, 0] = NAN  # only the shapes of the inputs matter
    for gpu in (False, True):
        got = run_layer("PriorBox", {0: [8.0], 1: [16.0], 2: [2.0], 9: -233, 10: -233}, [], [feat, image], gpu=gpu)[0]
        assert np.isfinite(got).all()


CHAINS = {
    "conv-relu": ["Convolution c 1 1 in0 a 0=8 1=3 4=1 5=1 6=576", "ReLU r 1 1 a out0"],
    "conv-clip": ["Convolution c 1 1 in0 a 0=8 1=3 4=1 5=1 6=576", "Clip r 1 1 a out0 0=-0.5 1=0.5"],
    "eltwise-relu": ["Split s 1 2 in0 a b", "Eltwise e 2 1 a b c 0=2", "ReLU r 1 1 c out0"],
    "conv-residual-relu": ["Split s 1 2 in0 a b", "Convolution c 1 1 a d 0=8 1=3 4=1 5=1 6=576",
                           "Eltwise e 2 1 d b f 0=1", "ReLU r 1 1 f out0"],
    "innerproduct-relu": ["InnerProduct f 1 1 in0 a 0=10 1=1 2=2400", "ReLU r 1 1 a out0"],
}


def net_text(lines: list) -> str:
    """A .param: Input in0, then `lines` ("Type name n_in n_out blobs... params...")."""
    blobs = {"in0"}
    for line in lines:
        words = line.split()
        blobs.update(words[4:4 + int(words[2]) + int(words[3])])
    return f"7767517\n{len(lines) + 1} {len(blobs)}\nInput in0 0 1 in0\n" + "\n".join(lines) + "\n"


def run_net(text: str, weights: bytes, x: np.ndarray, gpu: bool, fp16: bool) -> np.ndarray:
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.load_param_mem(text)
    net.load_model(weights)
    with net.create_extractor() as ex:
        ex.input("in0", vkncnn.Mat(x))
        return ex.extract("out0")[1].numpy()


@pytest.mark.parametrize("chain", list(CHAINS))
def test_fused_activations(chain):
    # activations and sums the GPU plan folds into the producer's dispatch (gpu/fusion.py)
    text = net_text(CHAINS[chain])
    weights = random_net_weights(text)
    for mode in MODES:
        x = poisoned((8, 5, 6), mode, 1)
        want = run_net(text, weights, x, gpu=False, fp16=False)
        assert_same_nonfinite(run_net(text, weights, x, gpu=True, fp16=False), want, FP32_TOLERANCE, f"{chain} {mode}")
        with np.errstate(over="ignore"):
            want16 = want.astype(np.float16).astype(np.float32)
        assert_same_nonfinite(run_net(text, weights, x, gpu=True, fp16=True), want16, FP16_TOLERANCE,
                              f"{chain} {mode} fp16")


def test_every_layer_with_a_shader_is_covered():
    from vkncnn.layer import LAYER_REGISTRY, create_layer

    covered = {t for t, _ in UNARY + AFFINE} | {t for t, *_ in NORMS + SHAPE_LAYERS} | {
        "BinaryOp", "Eltwise", "Pooling", "Reduction", "Softmax", "Convolution", "ConvolutionDepthWise",
        "Deconvolution", "DeconvolutionDepthWise", "Convolution1D", "ConvolutionDepthWise1D", "Deconvolution1D",
        "DeconvolutionDepthWise1D", "InnerProduct", "Gemm", "MatMul", "MultiHeadAttention", "SDPA",
        "RotaryEmbed", "MemoryData", "PriorBox",
        "Input"}  # the net's input itself: it computes nothing
    with_shader = {t for t in LAYER_REGISTRY if create_layer(t).support_vulkan}
    assert with_shader <= covered, f"layers with a shader and no NaN/inf case here: {sorted(with_shader - covered)}"


# -- empty inputs ------------------------------------------------------------------------------
EMPTY = [
    ("Convolution", {0: 4, 1: 1, 6: 12}, [(0, 4, 4)]), ("Convolution", {0: 4, 1: 3, 6: 108}, [(3, 0, 5)]),
    ("Convolution", {0: 4, 1: 1, 6: 12}, [(0,)]), ("ConvolutionDepthWise", {0: 3, 1: 1, 6: 3, 7: 3}, [(0, 4, 4)]),
    ("Deconvolution", {0: 4, 1: 1, 6: 12}, [(0, 4, 4)]), ("Deconvolution", {0: 4, 1: 1, 6: 12}, [(3, 0, 4)]),
    ("Deconvolution", {0: 4, 1: 3, 6: 108}, [(3, 2, 0)]),
    ("Convolution1D", {0: 4, 1: 1, 6: 12}, [(3, 0)]), ("InnerProduct", {0: 4, 2: 12}, [(0, 3)]),
    ("InnerProduct", {0: 4, 2: 12}, [(0,)]), ("ReLU", {}, [(0, 4, 4)]), ("ReLU", {}, [(3, 0, 4)]),
    ("Pooling", {0: 0, 1: 2, 2: 2}, [(0, 4, 4)]), ("Concat", {0: 0}, [(0, 3), (4, 3)]),
    ("Concat", {0: 1}, [(4, 0), (4, 3)]), ("BinaryOp", {0: 0}, [(0, 3), (1, 3)]),
    ("BinaryOp", {0: 2}, [(1, 3), (0, 3)]), ("Eltwise", {0: 1}, [(0, 3), (0, 3)]),
    ("MatMul", {}, [(4, 3), (3, 0)]), ("Interp", {0: 2, 1: 2.0, 2: 2.0}, [(0, 4, 4)]),
    ("Interp", {0: 2, 3: 8, 4: 8}, [(3, 0, 4)]), ("Padding", {0: 1, 1: 1, 4: 1}, [(3, 0, 4)]),
    ("Padding", {0: 1, 1: 1, 4: 0}, [(3, 0, 4)]), ("LayerNorm", {0: 4, 1: 1e-5, 2: 0}, [(0, 4)]),
    ("Softmax", {0: 1, 1: 1}, [(0, 3)]), ("Reshape", {0: -1}, [(0, 4)]), ("Permute", {0: 1}, [(0, 4)]),
    ("MultiHeadAttention", {0: 8, 1: 2, 2: 64, 3: 8, 4: 8}, [(0, 8), (3, 8), (3, 8)]),
    ("MultiHeadAttention", {0: 8, 1: 2, 2: 64, 3: 8, 4: 8}, [(3, 8), (0, 8), (0, 8)]),
    ("SDPA", {}, [(4, 2, 8), (2, 0, 8), (2, 0, 8)]), ("SDPA", {}, [(4, 0, 8), (2, 2, 8), (2, 2, 8)]),
]


@pytest.mark.parametrize("type_name,params,shapes", EMPTY, ids=str)
def test_empty_inputs(type_name, params, shapes):
    """Where the numpy path computes an answer the GPU gives the same; elsewhere a vkncnn.Error
    that names the problem, never the fp16 weight-storage message nor a Python error."""
    weights = random_layer_weights(type_name, params, len(shapes))
    inputs = [np.random.default_rng(i).uniform(-1, 1, s).astype(np.float32) for i, s in enumerate(shapes)]
    try:
        want = run_layer(type_name, params, weights, inputs)[0]
    except Error:
        want = None
    for fp16 in (False, True):
        try:
            got = run_layer(type_name, params, weights, inputs, gpu=True, fp16=fp16)[0]
        except Error as e:
            assert "use_fp16_storage" not in str(e) and "Error:" not in str(e), f"fp16={fp16}: unclear error: {e}"
            assert want is None, f"fp16={fp16}: the numpy path gives {want.shape}, the GPU raised {e}"
            continue
        if want is not None:
            tol = FP16_TOLERANCE if fp16 else FP32_TOLERANCE
            assert_same_nonfinite(got, want.astype(np.float16).astype(np.float32) if fp16 else want, tol,
                                  f"{type_name} {shapes} fp16={fp16}")
        else:
            assert got.size == 0, f"fp16={fp16}: the numpy path refuses {shapes}, the GPU computes {got.shape}"


@pytest.mark.parametrize("type_name,params,shape", [
    ("Deconvolution", {0: 4, 1: 3, 3: 2, 6: 108}, (3, 0, 4)),
    ("DeconvolutionDepthWise", {0: 3, 1: 3, 6: 27, 7: 3}, (3, 4, 0)),
    ("Deconvolution1D", {0: 4, 1: 3, 3: 2, 6: 96}, (8, 0)),
    ("Deconvolution1D", {0: 8, 1: 4, 2: 2, 3: 3, 6: 512}, (16, 0)),
], ids=str)
def test_transposed_convolution_of_an_empty_input_is_refused(type_name, params, shape):
    # its output would be (in - 1) * stride + kernel extent wide, made of nothing but the bias
    weights = random_layer_weights(type_name, params, 1)
    for fp16 in (False, True):
        with pytest.raises(Error, match="is empty, there is nothing to convolve"):
            run_layer(type_name, params, weights, [np.zeros(shape, np.float32)], gpu=True, fp16=fp16)


def test_empty_kv_cache_in_fp16_storage():
    # a first decoding step: Concat of an empty cache with the new keys
    k = np.random.default_rng(0).uniform(-1, 1, (2, 3, 8)).astype(np.float32)
    for fp16 in (False, True):
        got = run_layer("Concat", {0: 1}, b"", [np.zeros((2, 0, 8), np.float32), k], gpu=True, fp16=fp16)[0]
        np.testing.assert_allclose(got, k, rtol=1e-3, atol=1e-3)
