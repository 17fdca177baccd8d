"""A decoder's residual sum after a one-row linear layer (Gemm -> BinaryOp add) is folded into
the matrix-vector kernel's dispatch, the summand standing in for its bias; where the shapes
do not allow it as the plan records (several rows, a broadcasting sum) both record on their
own. Every case equals the numpy path."""

import numpy as np
import pytest

import vkncnn
from vkncnn.gpu.vulkan import instance
from vkncnn.tools.randweights import random_weights

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

N, K = 24, 32
RESIDUAL = f"""7767517
5 5
Input x 0 1 x
Input r 0 1 r
Gemm proj 1 1 x p 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8={N} 9={K}
BinaryOp add 2 1 r p s 0=0
ReLU act 1 1 s y
"""


def _nets(tmp_path):
    param = tmp_path / "res.param"
    param.write_text(RESIDUAL)
    weights = random_weights(str(param), seed=2, input_shapes={"x": (1, K), "r": (1, N)})
    nets = []
    for gpu in (False, True):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = False
        net.load_param(str(param))
        net.load_model(weights)
        nets.append(net)
    return nets


def _run(net, x, r):
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(x))
        ex.input("r", vkncnn.Mat(r))
        y = ex.extract("y")[1].numpy()
        plan = ex._gpu.plans[-1] if ex._gpu is not None else None
    return y, plan


@pytest.mark.parametrize("rows, r_shape, folded", [
    (1, (1, N), True),     # a decode step: one row, the summand of the output's shape
    (3, (3, N), False),    # a prefill: several rows take the matrix kernel, the sum its own dispatch
    (1, (N,), False),      # a 1-D summand broadcasting against (1, N): not a stand-in bias
])
def test_residual_sum_after_a_linear_layer(tmp_path, rows, r_shape, folded):
    cpu, gpu = _nets(tmp_path)
    rng = np.random.default_rng(rows)
    x = rng.uniform(-1, 1, (rows, K)).astype(np.float32)
    r = rng.uniform(-1, 1, r_shape).astype(np.float32)
    want, _ = _run(cpu, x, r)
    got, plan = _run(gpu, x, r)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    names = plan.cmd.dispatch_count
    if folded:
        assert names == 1  # gemv with the summand and the ReLU: no BinaryOp, no ReLU dispatch
    else:
        assert names >= 3
