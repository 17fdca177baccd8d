"""vkncnn generate: continue a text with an LLM decoder (the tiny model shipped with vkncnn by default).

    vkncnn generate "Return the "
    vkncnn generate "The Zen of Python" --max-new-tokens 200 --temperature 0.8 --top-k 20 --seed 1 --stream
    vkncnn generate --model DIR "prompt" --gpu

DIR holds decoder / proj_out / embed .ncnn.param+.bin, tokenizer.json and config.json, as
tools/dev/train_tiny_lm.py writes them (see docs/generate.md). Temperature 0 (the default) is
greedy decoding; --seed makes sampling repeatable. The prompt is printed first, then the
continuation (as it comes, with --stream).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from vkncnn.llm import decoder_step, device_step, load_generator

from .cmd_common import CommandError

TINY_LM_DIR = Path(__file__).resolve().parent / "data" / "tiny_lm"


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an int >= 0")
    return value


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("prompt", help="the text to continue")
    ap.add_argument("--model", type=Path, default=TINY_LM_DIR, metavar="DIR",
                    help="a model directory (default: the tiny character-level model shipped with vkncnn)")
    ap.add_argument("--max-new-tokens", "-n", type=_non_negative_int, default=100, metavar="N",
                    help="tokens to generate at most (default 100)")
    ap.add_argument("--temperature", "-t", type=float, default=0.0, metavar="T",
                    help="0 = greedy (default); higher = more varied")
    ap.add_argument("--top-k", type=_non_negative_int, default=0, metavar="K",
                    help="sample among the K likeliest (0 = all)")
    ap.add_argument("--top-p", type=float, default=1.0, metavar="P",
                    help="sample among the likeliest tokens whose probabilities reach P (1 = all)")
    ap.add_argument("--repetition-penalty", type=float, default=1.0, metavar="R",
                    help="> 1 discourages tokens already in the text (default 1: off)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the sampling RNG (default: fresh each run)")
    ap.add_argument("--stream", action="store_true", help="print each token as it is generated")
    ap.add_argument("--stats", action="store_true", help="print tokens/s to stderr at the end")
    dev = ap.add_mutually_exclusive_group()
    dev.add_argument("--gpu", action="store_true", help="Vulkan path")
    dev.add_argument("--cpu", action="store_true", help="numpy path (default)")
    ap.add_argument("--fp16", action="store_true", help="fp16 storage on the GPU (default fp32: same tokens as numpy)")
    ap.add_argument("--mat-cache", action="store_true",
                    help="with --gpu: pass the KV cache as Mats in and out at every step, the pyncnn way, "
                         "instead of keeping it on the device")


def run(args: argparse.Namespace) -> int:
    if not args.model.is_dir():
        raise CommandError(f"--model {args.model}: expected a model directory (decoder/proj_out/embed nets, "
                           f"tokenizer.json, config.json)")
    gen = load_generator(args.model, gpu=args.gpu, fp16=args.fp16)
    if args.mat_cache:
        gen.step = decoder_step
    sampling = dict(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                    repetition_penalty=args.repetition_penalty, seed=args.seed)
    start = time.perf_counter()
    tokens = gen.stream(args.prompt, args.max_new_tokens, **sampling)  # checks every argument before printing
    out = sys.stdout
    out.write(args.prompt)
    out.flush()
    generated = []
    for token in tokens:
        generated.append(token)
        if args.stream:
            out.write(gen.tokenizer.decode([token]))
            out.flush()
    if not args.stream:
        out.write(gen.tokenizer.decode(generated))
    count = len(generated)
    out.write("\n")
    out.flush()
    if args.stats:
        seconds = time.perf_counter() - start
        path = "numpy path" if not args.gpu else "GPU path, KV cache " + (
            "on the device" if gen.step is device_step else "as Mats")
        print(f"{count} tokens in {seconds:.2f} s ({count / max(seconds, 1e-9):.1f} tokens/s, {path})",
              file=sys.stderr)
    return 0
