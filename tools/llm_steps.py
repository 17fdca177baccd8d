"""One decoder step of an LLM of ncnn's benchmark set, in vkncnn or in real ncnn.

A step feeds `cur` new tokens after `past` cached ones: in0 the token embeddings
(cur, hidden), in1 the additive causal mask (cur, past + cur), in2/in3 the RoPE cos/sin
tables (cur, half dim), and per attention block the cached keys and values (cache_k0,
cache_v0, ...: empty Mats before a prefill). It returns out0, the hidden states
(cur, hidden), and the caches grown by `cur` (out_cache_k0, out_cache_v0, ...), which
the next step feeds back. This is how a pyncnn user drives these decoders, and how
benchncnn_llm times them (there, with proj_out turning the last hidden state into logits).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from vkncnn.memory_budget import check_alloc

from .benchmark_models import BENCHMARK_DIR, LLM_MODELS


def proj_out_path(name: str) -> str:
    return str(BENCHMARK_DIR / "llm" / f"{name}_proj_out.ncnn.param")


def step_feed(name: str, cur: int, past: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for one step of model `name` (see LLM_MODELS): embeddings, mask, RoPE tables."""
    hidden, half = LLM_MODELS[name]
    check_alloc(None, (cur, past + cur), 4, f"{name}: the step's mask")
    check_alloc(None, (cur, max(hidden, 2 * half)), 4, f"{name}: the step's embeddings")
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 3, (cur, half))
    mask = np.zeros((cur, past + cur), np.float32)
    mask[:, past:] = np.triu(np.full((cur, cur), -1e30, np.float32), 1)
    return {
        "in0": rng.uniform(-1, 1, (cur, hidden)).astype(np.float32),
        "in1": mask,
        "in2": np.cos(angles).astype(np.float32),
        "in3": np.sin(angles).astype(np.float32),
    }


def decode_case(decoder, name: str, past: int) -> tuple[dict[str, np.ndarray], object]:
    """benchncnn_llm's decode case for `decoder` (VkncnnDecoder or NcnnDecoder): the feed of one
    token after `past` cached ones, and the caches of an untimed prefill of those `past`."""
    _, caches, _ = decoder.step(step_feed(name, past, 0, seed=1), decoder.empty_caches())
    return step_feed(name, 1, past, seed=2), caches


def sequence_feeds(name: str, lengths: list[int], seed: int = 0) -> list[dict[str, np.ndarray]]:
    """The feeds of consecutive steps of `lengths` tokens each (a prefill, then decode steps)."""
    feeds, past = [], 0
    for i, cur in enumerate(lengths):
        feeds.append(step_feed(name, cur, past, seed + i))
        past += cur
    return feeds


def joined_feed(feeds: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One prefill of all the steps' tokens at once: with a causal mask, its out0 rows and
    caches equal those the steps give one after another."""
    joined = {k: np.concatenate([f[k] for f in feeds]) for k in ("in0", "in2", "in3")}
    n = joined["in0"].shape[0]
    joined["in1"] = np.triu(np.full((n, n), -1e30, np.float32), 1)
    return {k: joined[k] for k in ("in0", "in1", "in2", "in3")}


def run_steps(decoder, feeds: list[dict]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Run the steps one after another, each fed the caches the one before returned.
    Returns every step's out0 and the last step's caches, as arrays."""
    caches = decoder.empty_caches()
    hiddens = []
    for feed in feeds:
        hidden, caches, _ = decoder.step(feed, caches)
        hiddens.append(np.array(hidden))
    return hiddens, [np.array(c) for c in caches]


def cache_names(input_names: list[str]) -> list[str]:
    return [n for n in input_names if n.startswith("cache_")]


# with the caches on the device, proj_out runs as the Decoder's head (one submission a decode
# step, proj_out reading the hidden state on the device; step() then returns no out0); 0:
# after it, through an extractor (decode_ab compares the two)
HEAD_ON_DEVICE = 1


class VkncnnDecoder:
    """vkncnn's decoder (and optionally proj_out) net; caches are Mats passed in and out, or,
    with device_cache on the GPU path, a vkncnn.llm.DeviceCache whose buffers stay on the device."""

    name = "vkncnn"

    def __init__(self, param: str, weights: bytes, gpu: bool, fp16: bool, threads: int = 0,
                 device: int = 0, proj_out: tuple[str, bytes] | None = None, device_cache: bool = False) -> None:
        import vkncnn
        import vkncnn.llm

        self.vk = vkncnn
        self.llm = vkncnn.llm
        self.net = self._load(param, weights, gpu, fp16, threads, device)
        self.proj = self._load(*proj_out, gpu, fp16, threads, device) if proj_out else None
        self.caches = cache_names(self.net.input_names())
        self.device_cache = device_cache and gpu
        self.head = self.proj if self.device_cache and HEAD_ON_DEVICE else None
        if self.device_cache:
            problem = vkncnn.llm.device_cache_problem(self.net)
            if problem is not None:
                raise RuntimeError(f"no device KV cache for {param}: {problem}")

    def _load(self, param, weights, gpu, fp16, threads, device):
        net = self.vk.Net()
        o = net.opt
        o.use_vulkan_compute = gpu
        if threads:
            o.num_threads = threads
        o.use_fp16_storage = o.use_fp16_packed = o.use_fp16_arithmetic = fp16
        if gpu:
            net.set_vulkan_device(device)
        net.load_param(param)
        if gpu and net.gpu is None:
            raise RuntimeError("no Vulkan device for vkncnn")
        net.load_model(weights)
        return net

    def empty_caches(self):
        if self.device_cache:
            return self.llm.DeviceCache(self.llm.Decoder(self.net, head=self.head))
        return [self.vk.Mat() for _ in self.caches]

    def step(self, feed: dict, caches) -> tuple:
        """(out0 Mat, the caches after this step (Mats, or a DeviceCache), logits Mat or None).

        A DeviceCache may be fed again, as Mats may: the step then writes after its tokens.
        With proj_out as the Decoder's head (HEAD_ON_DEVICE), out0 stays on the device: None."""
        Mat = self.vk.Mat
        if self.device_cache:
            args = feed["in0"], feed["in1"], feed["in2"], feed["in3"]
            if caches.decoder.head is not None:
                logits, out_caches = self.llm.device_head_step(self.net, *args, caches)
                return None, out_caches, Mat(logits)
            dec = caches.decoder
            dec.restore(caches.length, caches.serial)
            hidden = Mat(dec.step(*args))
            out_caches = self.llm.DeviceCache(dec, dec.length, dec.serial)
        else:
            with self.net.create_extractor() as ex:
                for k, v in feed.items():
                    ex.input(k, Mat(v))
                for k, m in zip(self.caches, caches):
                    ex.input(k, m)
                out_caches = [ex.extract("out_" + k)[1] for k in self.caches]
                hidden = ex.extract("out0")[1]
        logits = None
        if self.proj is not None:
            with self.proj.create_extractor() as ex:
                ex.input("in0", Mat(np.asarray(hidden)[-1:]))
                logits = ex.extract("out0")[1]
        return hidden, out_caches, logits


class NcnnDecoder:
    """Real ncnn's decoder through its Python API, caches as host ncnn.Mats from extract.

    Its outputs are for timing, and out0 for checking: the pinned wheel's SDPA returns
    wrong cache contents on x86 (docs/llm.md)."""

    name = "ncnn"

    def __init__(self, param: str, weights: bytes, gpu: bool, fp16: bool, threads: int = 0,
                 device: int = 0, proj_out: tuple[str, bytes] | None = None) -> None:
        import ncnn

        self.ncnn = ncnn
        self._tmp = tempfile.TemporaryDirectory()
        self.net = self._load(param, weights, "decoder", gpu, fp16, threads, device)
        self.proj = self._load(*proj_out, "proj_out", gpu, fp16, threads, device) if proj_out else None
        self.caches = cache_names(self.net.input_names())

    def _load(self, param, weights, stem, gpu, fp16, threads, device):
        bin_path = os.path.join(self._tmp.name, stem + ".bin")
        with open(bin_path, "wb") as f:
            f.write(weights)
        net = self.ncnn.Net()
        o = net.opt
        o.use_vulkan_compute = gpu
        if threads:
            o.num_threads = threads
        o.use_fp16_storage = o.use_fp16_packed = o.use_fp16_arithmetic = fp16
        o.use_bf16_storage = False
        if gpu:
            net.set_vulkan_device(device)
        if net.load_param(param) != 0 or net.load_model(bin_path) != 0:
            raise RuntimeError(f"real ncnn could not load {param}")
        return net

    def empty_caches(self) -> list:
        return [self.ncnn.Mat() for _ in self.caches]

    def step(self, feed: dict, caches: list) -> tuple:
        Mat = self.ncnn.Mat
        ex = self.net.create_extractor()
        keep = [Mat(v).clone() for v in feed.values()]  # its binding does not hold numpy memory
        for k, m in zip(feed, keep):
            ex.input(k, m)
        for k, m in zip(self.caches, caches):
            ex.input(k, m)
        out_caches = [ex.extract("out_" + k)[1] for k in self.caches]
        hidden = ex.extract("out0")[1]
        logits = None
        if self.proj is not None:
            ex2 = self.proj.create_extractor()
            # as benchncnn_llm does; converting a Vulkan-path Mat to numpy can crash the binding
            # (its cache outputs come back packed), so the Mats stay Mats
            last = hidden.row_range(hidden.h - 1, 1).clone() if hidden.h > 1 else hidden
            ex2.input("in0", last)
            logits = ex2.extract("out0")[1]
        return hidden, out_caches, logits

    def close(self) -> None:
        self._tmp.cleanup()
