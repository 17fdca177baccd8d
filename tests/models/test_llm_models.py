"""LLM decoders (benchncnn_llm's set), seeded random weights, prefill: vkncnn vs real ncnn.

qwen2.5_0.5b runs by default (1.4 GB of random weights); the others are `-m slow`.
"""

import os
import tempfile

import numpy as np
import pytest

import vkncnn
from vkncnn.testing import rel_err
from vkncnn.tools.benchmark_models import LLM_MODELS, llm_decoder_path, llm_prefill_inputs
from vkncnn.tools.ncnn_oracle import ncnn
from vkncnn.tools.randweights import random_weights

SEQLEN = 3


def _feed_caches(ex, names, empty):
    for name in names:
        if name.startswith("cache"):
            ex.input(name, empty)


def _run_both(name: str, gpu: bool = False):
    path = str(llm_decoder_path(name))
    weights = random_weights(path, seed=0)
    inputs = llm_prefill_inputs(name, SEQLEN)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = False
    net.load_param(path)
    net.load_model(weights)
    with net.create_extractor() as ex:
        for k, v in inputs.items():
            ex.input(k, vkncnn.Mat(v))
        _feed_caches(ex, net.input_names(), vkncnn.Mat(np.zeros(0, np.float32)))
        ours = ex.extract("out0")[1].numpy()
    del net
    with tempfile.TemporaryDirectory() as d:
        bin_path = os.path.join(d, "w.bin")
        with open(bin_path, "wb") as f:
            f.write(weights)
        del weights
        ref_net = ncnn.Net()
        o = ref_net.opt
        o.use_vulkan_compute = False
        o.use_fp16_packed = o.use_fp16_storage = o.use_fp16_arithmetic = o.use_bf16_storage = False
        ref_net.load_param(path)
        ref_net.load_model(bin_path)
        ex = ref_net.create_extractor()
        keep = [ncnn.Mat(v).clone() for v in inputs.values()]
        for k, m in zip(inputs, keep):
            ex.input(k, m)
        _feed_caches(ex, ref_net.input_names(), ncnn.Mat())
        ref = np.array(ex.extract("out0")[1])
    return ours, ref


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "qwen2.5_0.5b" else pytest.mark.slow)
                                  for n in LLM_MODELS])
def test_llm_decoder_prefill_matches_ncnn(name):
    if ncnn is None:
        pytest.skip("real ncnn not installed")
    ours, ref = _run_both(name)
    assert ours.shape == ref.shape == (SEQLEN, LLM_MODELS[name][0])
    assert rel_err(ours, ref) <= 1e-3


@pytest.mark.gpu
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "qwen2.5_0.5b" else pytest.mark.slow)
                                  for n in LLM_MODELS])
def test_llm_decoder_prefill_on_gpu_matches_ncnn(name):
    """The same prefill on the Vulkan path (fp32 storage) against real ncnn on the CPU."""
    if ncnn is None:
        pytest.skip("real ncnn not installed")
    ours, ref = _run_both(name, gpu=True)
    assert ours.shape == ref.shape == (SEQLEN, LLM_MODELS[name][0])
    assert rel_err(ours, ref) <= 1e-3
