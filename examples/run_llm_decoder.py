"""Greedy decoding with an LLM decoder through its KV-cache inputs and outputs.

    python3 examples/run_llm_decoder.py [--model qwen2.5_0.5b] [--prompt 3,14,15] [--steps 4] [--gpu]

The model is one of the decoders of ncnn's LLM benchmark set, shipped as `.param` files in
tools/data/benchmark/llm/ (`<name>_decoder.ncnn.param` and `<name>_proj_out.ncnn.param`).
They come WITHOUT weights: this script draws seeded random ones (`vkncnn randweights` does
the same), so the token ids it prints are meaningless as text. What the script shows is
the mechanics a real chat loop uses with trained weights:

- the decoder takes token embeddings (in0), an additive attention mask (in1) and the RoPE
  cos/sin tables of the positions (in2, in3), plus one cached key and value per layer
  (cache_k0, cache_v0, ...); it returns the hidden states (out0) and the updated caches
  (out_cache_k0, out_cache_v0, ...);
- prefill runs the whole prompt once with empty caches; each decode step then feeds one
  token and the caches of the step before, so a step costs the same however long the
  text already is;
- proj_out turns the last hidden state into logits over the vocabulary; greedy decoding
  takes the argmax.

The embedding table is not part of these files either: each token id gets a fixed random
vector (seeded by the id). Generating the random weights (~2 GB for qwen2.5_0.5b, the
smallest) takes most of the run time: about 20 s on two CPU cores.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

import vkncnn as ncnn
from vkncnn.tools.randweights import random_weights

LLM_DIR = Path(__file__).resolve().parent.parent / "tools" / "data" / "benchmark" / "llm"
# name -> (hidden size, head dim, RoPE base) of the architectures these decoders were exported from
MODELS = {
    "qwen2.5_0.5b": (896, 64, 1_000_000.0),
    "qwen3_0.6b": (1024, 128, 1_000_000.0),
}


@functools.lru_cache(maxsize=4)  # one copy of the weights per process: nets are shared, caches are not
def load(param: Path, gpu: bool, seed: int) -> ncnn.Net:
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.use_fp16_storage = False  # random weights: keep fp32 so both paths print the same ids
    net.load_param(str(param))
    net.load_model(random_weights(str(param), seed=seed))
    return net


def embed(token_ids: list[int], hidden: int) -> np.ndarray:
    """(len, hidden) float32: a fixed random vector per token id, standing in for a trained table."""
    return np.stack([np.random.default_rng(t).standard_normal(hidden) for t in token_ids]).astype(np.float32)


def rope_tables(positions: np.ndarray, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of position x inverse frequency: (len, head_dim / 2) each."""
    inv_freq = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(positions, inv_freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def causal_mask(new: int, past: int) -> np.ndarray:
    """(new, past + new): 0 where a query may attend, a large negative number where it may not."""
    mask = np.zeros((new, past + new), np.float32)
    mask[:, past:] = np.triu(np.full((new, new), -1e30, np.float32), 1)
    return mask


class Decoder:
    """One conversation: the (shared) decoder and projection nets, and its own KV cache."""

    def __init__(self, name: str, gpu: bool, seed: int = 0) -> None:
        self.hidden, self.head_dim, self.base = MODELS[name]
        self.decoder = load(LLM_DIR / f"{name}_decoder.ncnn.param", gpu, seed)
        self.proj_out = load(LLM_DIR / f"{name}_proj_out.ncnn.param", gpu, seed + 1)
        self.cache_names = [n for n in self.decoder.input_names() if n.startswith("cache_")]
        self.reset()

    def reset(self) -> None:
        """Forget the conversation: empty caches, as before a prefill."""
        self.caches = {n: np.zeros(0, np.float32) for n in self.cache_names}
        self.past = 0
        self.last_logits = None

    def step(self, token_ids: list[int]) -> int:
        """Feed tokens after those already cached; returns the greedy next token id."""
        positions = np.arange(self.past, self.past + len(token_ids))
        cos, sin = rope_tables(positions, self.head_dim, self.base)
        with self.decoder.create_extractor() as ex:
            ex.input("in0", ncnn.Mat(embed(token_ids, self.hidden)))
            ex.input("in1", ncnn.Mat(causal_mask(len(token_ids), self.past)))
            ex.input("in2", ncnn.Mat(cos))
            ex.input("in3", ncnn.Mat(sin))
            for name in self.cache_names:
                ex.input(name, ncnn.Mat(self.caches[name]))
            _, hidden = ex.extract("out0")
            last = hidden.numpy()[-1:]  # only the last position predicts the next token
            for name in self.cache_names:
                self.caches[name] = ex.extract("out_" + name)[1].numpy()
        self.past += len(token_ids)
        self.last_logits = self.proj_out.run({"in0": last})["out0"].reshape(-1)
        return int(np.argmax(self.last_logits))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="qwen2.5_0.5b")
    ap.add_argument("--prompt", default="3,14,15", help="comma-separated token ids to prefill")
    ap.add_argument("--steps", type=int, default=4, help="tokens to generate after the prompt")
    ap.add_argument("--gpu", action="store_true", help="the Vulkan path (default: numpy)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    args = ap.parse_args(argv)
    prompt = [int(t) for t in args.prompt.split(",")]

    t0 = time.perf_counter()
    dec = Decoder(args.model, args.gpu, args.seed)
    print(f"{args.model}: random weights loaded in {time.perf_counter() - t0:.1f} s "
          f"({len(dec.cache_names) // 2} layers, KV cache inputs {dec.cache_names[0]}..{dec.cache_names[-1]})")

    t0 = time.perf_counter()
    token = dec.step(prompt)
    print(f"prefill {prompt}: next token {token} ({(time.perf_counter() - t0) * 1e3:.0f} ms)")
    generated = [token]
    for _ in range(args.steps - 1):
        t0 = time.perf_counter()
        token = dec.step([token])
        generated.append(token)
        k0 = dec.caches[dec.cache_names[0]]
        print(f"decode step: token {token}, cache_k0 {k0.shape} ({(time.perf_counter() - t0) * 1e3:.0f} ms)")
    print("generated token ids:", ",".join(map(str, generated)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
