"""Generate text with the tiny character-level language model that ships with vkncnn.

    python3 examples/generate_text.py [--prompt "Return the "] [--max-new-tokens 80] [--seed 1] [--gpu]

The model (tools/data/tiny_lm/, about 0.5 M parameters) was trained for a few minutes on a
CPU on the Zen of Python and standard-library docstrings, and exported by pnnx into ncnn's
LLM form: a decoder with KV-cache inputs and outputs, a proj_out net and an embedding net.
The script shows the three ways to use vkncnn.llm.Generator:

- greedy decoding (deterministic: the same text on the numpy path and the GPU path);
- sampling with temperature, top-k and top-p, repeatable with a seed;
- streaming: each character printed as soon as the model has chosen it (the sampled text
  again: same seed, same tokens).
"""

from __future__ import annotations

import argparse
import sys
import time

from vkncnn.llm import load_generator
from vkncnn.tools.cmd_generate import TINY_LM_DIR


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompt", default="Return the ")
    ap.add_argument("--max-new-tokens", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1, help="seed of the sampling RNG")
    ap.add_argument("--gpu", action="store_true", help="the Vulkan path (default: numpy)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    gen = load_generator(TINY_LM_DIR, gpu=args.gpu)
    print(f"loaded {TINY_LM_DIR.name} in {time.perf_counter() - t0:.2f} s "
          f"({len(gen.cache_names) // 2} layers, {'GPU' if args.gpu else 'numpy'} path)")

    t0 = time.perf_counter()
    greedy = gen.generate(args.prompt, args.max_new_tokens)
    seconds = time.perf_counter() - t0
    print(f"greedy ({len(greedy.tokens) / seconds:.0f} tokens/s, stopped by {greedy.stop_reason}):")
    print(f"  {args.prompt + greedy.text!r}")

    sampling = dict(temperature=0.8, top_k=20, top_p=0.95, seed=args.seed)
    sampled = gen.generate_text(args.prompt, args.max_new_tokens, **sampling)
    print(f"sampled (temperature 0.8, top-k 20, top-p 0.95, seed {args.seed}):")
    print(f"  {args.prompt + sampled!r}")

    print("streamed (the same sampling, the same seed: the same text, a character at a time):")
    sys.stdout.write("  " + args.prompt)
    for token in gen.stream(args.prompt, args.max_new_tokens, **sampling):
        sys.stdout.write(gen.tokenizer.decode([token]).replace("\n", "\n  "))
        sys.stdout.flush()
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
