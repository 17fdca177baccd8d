"""The differential layer fuzzer (tools/dev/layerfuzz), quick profile: a fixed, seeded set
of random valid configs per layer type, vkncnn against real ncnn.

The long profile: `python -m vkncnn.tools.dev.layerfuzz --cases 300 --seed N`; the paths
gpuD/gpuT (discrete-GPU kernels), gpuR (replayed plans) and gpu16a (fp16 arithmetic) with
`--paths`.
"""

import pytest

from tests.oracle import needs_gpu
from vkncnn.tools.dev.layerfuzz.known import known_ncnn_bug
from vkncnn.tools.dev.layerfuzz.registry import GENERATORS
from vkncnn.tools.dev.layerfuzz.runner import draw_case, fuzz_layer
from vkncnn.tools.dev.ncnn_worker import NcnnWorker

pytest.importorskip("ncnn")

CPU_CASES = 25
STORED_CASES = 4  # `<Layer>@stored` re-runs a weighted layer's draws with fp16 / 8-bit table weights
GPU_CASES = 5
# the layers real models use most also get a few cases on both GPU paths
GPU_LAYERS = ["Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise", "Pooling",
              "InnerProduct", "Gemm", "MatMul", "BinaryOp", "Eltwise", "Concat", "Slice", "Crop", "Padding",
              "Reshape", "Permute", "Interp", "Softmax", "LayerNorm", "GroupNorm", "Reduction", "UnaryOp",
              "MultiHeadAttention", "SDPA", "RMSNorm", "RotaryEmbed", "HardSwish", "Clip",
              "Gemm@int8", "MultiHeadAttention@int8", "Crop@expr", "Cast", "Quantize", "DeformableConv2D"]


# variants of a layer's generator (layerfuzz/wide.py: channels to 128; layerfuzz/long.py:
# one long reduced axis) and multi-layer chains (layerfuzz/chain.py) cost more per case:
# a few each, on every path
VARIANT_KEYS = [k for k in GENERATORS if k.endswith(("@wide", "@long", "@winograd"))]
CHAIN_KEYS = [k for k in GENERATORS if k.startswith("Chain@")]
ONE_LAYER_KEYS = [k for k in GENERATORS if k not in VARIANT_KEYS and k not in CHAIN_KEYS]
VARIANT_CASES = 1
CHAIN_CASES = 2
# the kernels a discrete GPU takes (layerfuzz/discrete.py), made to run on this device:
# Winograd and the direct kernel (gpuD), the tiled kernel with split-K (gpuT)
DISCRETE_KEYS = ["Convolution@winograd", "Convolution@wide", "Chain@residual"]
DISCRETE_CASES = 1


@pytest.fixture(scope="module")
def worker():
    w = NcnnWorker()
    yield w
    w.close()


def _assert_clean(report):
    assert not report.failures, "\n".join(report.failures)


@pytest.mark.parametrize("type_name", ONE_LAYER_KEYS)
def test_cpu_path_matches_ncnn(type_name, worker):
    cases = STORED_CASES if type_name.endswith("@stored") else CPU_CASES
    _assert_clean(fuzz_layer(type_name, cases, seed=1, paths=("cpu",), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", GPU_LAYERS)
def test_gpu_paths_match_ncnn(type_name, worker):
    _assert_clean(fuzz_layer(type_name, GPU_CASES, seed=2, paths=("gpu", "gpu16"), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", VARIANT_KEYS)
def test_wide_and_long_variants_match_ncnn(type_name, worker):
    _assert_clean(fuzz_layer(type_name, VARIANT_CASES, seed=3, paths=("cpu", "gpu", "gpu16"), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", CHAIN_KEYS)
def test_layer_chains_match_ncnn(type_name, worker):
    _assert_clean(fuzz_layer(type_name, CHAIN_CASES, seed=3, paths=("cpu", "gpu", "gpu16"), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", DISCRETE_KEYS)
def test_discrete_gpu_kernels_match_ncnn(type_name, worker):
    _assert_clean(fuzz_layer(type_name, DISCRETE_CASES, seed=3, paths=("gpuD", "gpuD16", "gpuT16"), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", ["Chain@residual", "Chain@split", "Convolution", "Softmax@long"])
def test_replayed_plans_match_ncnn(type_name, worker):
    """A second extractor on the same net replays the first one's GPU plans (gpuR)."""
    _assert_clean(fuzz_layer(type_name, 2, seed=3, paths=("gpuR16",), worker=worker))


@needs_gpu
@pytest.mark.parametrize("type_name", ["Convolution", "ConvolutionDepthWise", "InnerProduct", "Eltwise", "UnaryOp"])
def test_fp16_arithmetic_matches_ncnn(type_name, worker):
    """fp16 storage and arithmetic (gpu16a; gpuD16a: a discrete GPU's kernels, the direct one
    included), each case within twice real ncnn's own fp16-arithmetic error on it."""
    report = fuzz_layer(type_name, 3, seed=4, paths=("gpu16a", "gpuD16a"), worker=worker)
    _assert_clean(report)
    assert report.counts.get(("gpu16a", "ok"), 0) >= 2, report.counts


@pytest.mark.parametrize("type_name, seed, flagged, clean", [
    ("Gemm@int8", 62, 9, 8),   # an A element on a rounding tie (ncnn's SIMD row blocks)
    ("MultiHeadAttention@int8", 65, 37, 36),  # the same tie in its merged heads
    ("ROIAlign", 61, 10, 11),  # version 0's sample grid one larger than its buffer
    ("Pooling@wide", 65, 24, 23),  # SAME padding with a negative bottom: rows past the output
])
def test_known_ncnn_bug_rules_flag_their_cases(type_name, seed, flagged, clean):
    """A rule in layerfuzz/known.py matches the case it was measured on, not a neighbour."""
    assert known_ncnn_bug(draw_case(type_name, seed, flagged))
    assert not known_ncnn_bug(draw_case(type_name, seed, clean))
