"""ncnn's own layer-test grids (vkncnn/tools/dev/ncnn_grids), numpy path against real ncnn.

Each layer's grid is ncnn's tests/test_<layer>.cpp sweep transcribed as data. A case passes
when vkncnn agrees with ncnn within the case's tolerance, or when ncnn refuses it (ncnn's
answer is then no answer; vkncnn may define one). It fails when vkncnn refuses a case ncnn
answers, or answers something else.

Sampling: the full grids hold about 40,000 cases (BinaryOp alone 30,000), minutes of work.
This test keeps every k-th case of each layer's list, k = ceil(cases / 100), so each layer
runs at most about 100 spread over its whole grid (the lists are ordered as ncnn's loops,
so every k-th case still walks every shape group), plus every edge case the grid marks (zero
sizes, num_output 0 with dynamic weights, axes past the rank, channels 0) whatever k is.
The sample is the same every run. The full sweep: `python -m vkncnn.tools.dev.ncnn_grids`.
"""

import math

import pytest

from vkncnn.tools.dev.ncnn_grids import GRIDS, grid_cases
from vkncnn.tools.dev.ncnn_grids.registry import _load_families
from vkncnn.tools.dev.ncnn_grids.runner import run_layer
from vkncnn.tools.dev.ncnn_worker import NcnnWorker
from vkncnn.tools.ncnn_oracle import ncnn

pytestmark = pytest.mark.skipif(ncnn is None, reason="real ncnn (pip ncnn) is the oracle")

CASES_PER_LAYER = 100

_load_families()
LAYERS = sorted(GRIDS)


@pytest.fixture(scope="module")
def worker():
    w = NcnnWorker()
    yield w
    w.close()


@pytest.mark.parametrize("type_name", LAYERS)
def test_layer_matches_ncnn_on_its_grid(type_name, worker):
    every = max(1, math.ceil(len(grid_cases(type_name)) / CASES_PER_LAYER))
    tally = run_layer(type_name, worker, "cpu", every)
    assert tally.cases > 0
    assert tally.failed == 0, f"{type_name}: {tally.counts}\n" + "\n".join(
        f"#{i} {desc}: {detail}" for i, desc, detail in tally.failures[:10])


def test_the_grids_cover_the_layers_pnnx_writes_most():
    wanted = {"Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise", "Pooling",
              "InnerProduct", "Gemm", "MatMul", "BinaryOp", "UnaryOp", "Eltwise", "Concat", "Slice", "Split",
              "Crop", "Padding", "Interp", "Permute", "Flatten", "Squeeze", "ExpandDims", "Softmax", "LayerNorm",
              "GroupNorm", "InstanceNorm", "BatchNorm", "Reduction", "Sigmoid", "ReLU", "Swish", "HardSwish",
              "GELU", "Clip", "PixelShuffle", "ShuffleChannel", "MultiHeadAttention", "SDPA", "RMSNorm",
              "RotaryEmbed", "Embed", "Cast", "Dropout"}
    assert wanted <= set(GRIDS)


def test_the_runner_reports_a_wrong_answer(worker):
    """A case whose tolerance rounding alone breaks must come out as a mismatch, not as agreement
    (a 16x33x25 convolution's sums differ from ncnn's in their last bits)."""
    from vkncnn.tools.dev.ncnn_grids.runner import MISMATCH, run_one

    case = grid_cases("Convolution")[359]._replace(tol=-1.0)
    assert run_one("Convolution", 359, case, worker)[0] == MISMATCH
