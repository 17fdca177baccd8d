"""Chained dispatch levels (vkncnn/gpu/vulkan/level_chain.py): dependent matrix-vector
products and one-row attentions wait for the level before them on a counter, not behind a
barrier. Lavapipe runs a queue's dispatches one after another, so here the waits find their
counts complete at once: these tests hold the bookkeeping (which commands wait, on which
counter, for how many workgroups: a count too high gives up and raises), and that chained
plans compute exactly what barriered ones do. Synchronization validation cannot see the
counters, so these tests drop its hazard reports and keep every other message."""

from __future__ import annotations

import numpy as np
import pytest

import vkncnn
from vkncnn.errors import GpuError
from vkncnn.gpu.vulkan import instance, level_chain
from vkncnn.llm import load_generator
from vkncnn.tools.cmd_generate import TINY_LM_DIR
from vkncnn.tools.randweights import random_weights

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

# one-row products in a chain, a residual sum folded into the second, and a Softmax (a kernel
# without a chained variant) between the second and the third
CHAIN_PARAM = """7767517
7 7
Input in 0 1 x
Gemm g1 1 1 x a 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=64 9=32
Gemm g2 1 1 a b0 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=64 9=64
BinaryOp add 2 1 b0 a b 0=0
Softmax sm 1 1 b c 0=1 1=1
Gemm g3 1 1 c d 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=48 9=64
Gemm g4 1 1 d y 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=32 9=48
"""


@pytest.fixture
def waits(monkeypatch):
    """Chains on for this test; the levels that began with a wait, counted."""
    monkeypatch.setattr(level_chain, "CHAIN_LEVELS", 1)
    monkeypatch.delenv("VKNCNN_CHAIN_LEVELS", raising=False)
    counted = []
    next_level = level_chain.LevelChain.next_level

    def counting(self, waits: bool) -> None:
        counted.append(waits)
        next_level(self, waits)
    monkeypatch.setattr(level_chain.LevelChain, "next_level", counting)
    instance.clear_validation_messages()
    yield counted
    others = [m for m in instance.validation_messages() if "SYNC-HAZARD" not in m]
    instance.clear_validation_messages()
    assert others == []


def _chain_net(tmp_path, fp16: bool) -> vkncnn.Net:
    param = tmp_path / "chain.param"
    param.write_text(CHAIN_PARAM)
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = True
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = False
    net.load_param(str(param))
    net.load_model(random_weights(str(param), seed=3, input_shapes=(1, 32)))
    return net


def _extract(net: vkncnn.Net, x: np.ndarray) -> tuple[np.ndarray, int]:
    with net.create_extractor() as ex:
        ex.input("x", vkncnn.Mat(x))
        y = ex.extract("y")[1].numpy()
        return y, ex._gpu.plans[-1].cmd.barriers


@pytest.mark.parametrize("fp16", [False, True])
def test_chained_products_compute_what_barriered_ones_do(tmp_path, monkeypatch, waits, fp16):
    x = np.random.default_rng(0).uniform(-1, 1, (1, 32)).astype(np.float32)
    y, barriers = _extract(_chain_net(tmp_path, fp16), x)
    # g2 waits for g1, g4 for g3; the Softmax and g3 after it take barriers
    assert waits.count(True) == 2
    monkeypatch.setattr(level_chain, "CHAIN_LEVELS", 0)
    y_barriers, barriers_without = _extract(_chain_net(tmp_path, fp16), x)
    np.testing.assert_array_equal(y, y_barriers)
    # two waits instead of barriers; the counters' fill is ordered by the barrier g1 needs
    # after the input's upload anyway, and the flag's copy takes one at the end
    assert barriers == barriers_without - 2 + 1


def test_a_wait_that_gives_up_is_an_error_not_a_hang(tmp_path, monkeypatch, waits):
    next_level = level_chain.LevelChain.next_level

    def one_workgroup_too_many(self, waits: bool) -> None:
        next_level(self, waits)
        if waits:  # the count the next wait asks for: never reached
            self.previous_groups += 1
    monkeypatch.setattr(level_chain.LevelChain, "next_level", one_workgroup_too_many)
    with pytest.raises(GpuError, match="VKNCNN_CHAIN_LEVELS=0"):
        _extract(_chain_net(tmp_path, False), np.ones((1, 32), np.float32))


def test_decode_steps_chain_and_generate_the_same_tokens(waits):
    cpu = load_generator(TINY_LM_DIR)
    gpu = load_generator(TINY_LM_DIR, gpu=True)
    want = cpu.generate("Return the ", 12)
    got = gpu.generate("Return the ", 12)
    assert got.tokens == want.tokens
    np.testing.assert_allclose(np.array(got.logits), np.array(want.logits), atol=1e-3)
    assert waits.count(True) > 0


class _Info:
    def __init__(self, vendor: int) -> None:
        self.vendor = vendor

    def vendor_id(self) -> int:
        return self.vendor


class _Device:
    def __init__(self, vendor: int) -> None:
        self.info = _Info(vendor)


def test_chains_are_on_for_nvidia_unless_told_or_validated(monkeypatch):
    monkeypatch.delenv("VKNCNN_CHAIN_LEVELS", raising=False)
    monkeypatch.setattr(level_chain, "CHAIN_LEVELS", None)
    monkeypatch.setattr(level_chain, "validation_requested", lambda: False)
    nvidia, other = _Device(level_chain.NVIDIA), _Device(0x1002)
    assert level_chain.chains_on(nvidia) and not level_chain.chains_on(other)
    monkeypatch.setattr(level_chain, "validation_requested", lambda: True)
    assert not level_chain.chains_on(nvidia)
    monkeypatch.setattr(level_chain, "CHAIN_LEVELS", 1)
    assert level_chain.chains_on(other)
    monkeypatch.setenv("VKNCNN_CHAIN_LEVELS", "0")
    assert not level_chain.chains_on(nvidia)
    monkeypatch.setenv("VKNCNN_CHAIN_LEVELS", "1")
    monkeypatch.setattr(level_chain, "CHAIN_LEVELS", 0)
    assert level_chain.chains_on(other)
