"""SDPA's shape checks on the GPU path refuse what the numpy path refuses, with the same error."""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from vkncnn.gpu.vulkan import instance

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

PARAM = """7767517
4 4
Input q 0 1 q
Input k 0 1 k
Input v 0 1 v
SDPA op 3 1 q k v out
"""


@pytest.mark.parametrize("gpu", [False, True])
def test_zero_kv_groups_is_a_shape_error_on_both_paths(gpu):
    """No KV heads at all: nothing divides the query heads (the GPU check used to divide by it)."""
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param_mem(PARAM)
    net.load_model(vkncnn.DataReaderFromEmpty())
    rng = np.random.default_rng(0)
    with net.create_extractor() as ex:
        ex.input("q", vkncnn.Mat(rng.standard_normal((4, 5, 9)).astype(np.float32)))
        ex.input("k", vkncnn.Mat(np.zeros((0, 9, 9), np.float32)))
        ex.input("v", vkncnn.Mat(rng.standard_normal((1, 9, 3)).astype(np.float32)))
        with pytest.raises(vkncnn.ShapeError, match="heads divisible by groups"):
            ex.extract("out")
