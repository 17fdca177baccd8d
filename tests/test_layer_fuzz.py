"""The differential layer fuzzer (tools/layer_fuzz.py), quick profile: a fixed, seeded set
of random valid configs per layer type, vkncnn against real ncnn.

The long profile: `python -m vkncnn.tools.layer_fuzz --cases 300 --seed N`.
"""

import pytest

from vkncnn.gpu import instance
from vkncnn.tools.layer_fuzz import fuzz_layer
from vkncnn.tools.layer_fuzz_cases import GENERATORS
from vkncnn.tools.ncnn_worker import NcnnWorker

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


@pytest.fixture(scope="module")
def worker():
    w = NcnnWorker()
    yield w
    w.close()


def _assert_clean(report):
    assert not report.failures, "\n".join(report.failures)


@pytest.mark.parametrize("type_name", list(GENERATORS))
def test_cpu_path_matches_ncnn(type_name, worker):
    cases = STORED_CASES if type_name.endswith("@stored") else CPU_CASES
    _assert_clean(fuzz_layer(type_name, cases, seed=1, paths=("cpu",), worker=worker))


@pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("type_name", GPU_LAYERS)
def test_gpu_paths_match_ncnn(type_name, worker):
    _assert_clean(fuzz_layer(type_name, GPU_CASES, seed=2, paths=("gpu", "gpu16"), worker=worker))
