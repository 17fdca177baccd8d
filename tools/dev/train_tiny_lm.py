"""Train the tiny character-level language model and export it to tools/data/tiny_lm/ with pnnx.

Needs torch and pnnx (`pip install torch pnnx`); vkncnn itself never imports them. Runs offline
on a CPU in a few minutes (the text ships with Python: see tools/dev/tiny_lm_model.py) and writes

    decoder.ncnn.param/.bin    embeddings, mask, RoPE cos/sin, KV caches -> hidden states, caches
    proj_out.ncnn.param/.bin   hidden state -> logits over the 97 tokens
    embed.ncnn.param/.bin      token ids (int32) -> embeddings (an Embed layer)
    tokenizer.json             the alphabet and the end-of-text token
    config.json                RoPE (head dim, base), vocabulary size, context, stop tokens, shape
    reference.npz              torch's logits for one text, to check any runtime against

    python3 -m vkncnn.tools.dev.train_tiny_lm [--minutes 12] [--checkpoint FILE.pt] [--out DIR]

Training runs for a time budget, so how many steps it takes (and the weights) depend on the
machine; --checkpoint keeps the torch weights, to export them again without training.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

from .tiny_lm_export import export_tiny_lm
from .tiny_lm_model import ALPHABET, CORPUS_MODULES, END_OF_TEXT, TinyLM, TinyLMConfig, corpus_texts

SEQ_LEN = 64
BATCH = 32
MAX_CONTEXT = 1024  # RoPE goes further, but the model never saw text past SEQ_LEN
REFERENCE_TEXT = "Return a new list of the items."


def encode_corpus(texts: list[str]) -> np.ndarray:
    """One token stream: each text's characters (ids 1..96), then the end-of-text token 0."""
    index = {ch: i + 1 for i, ch in enumerate(ALPHABET)}
    ids: list[int] = []
    for text in texts:
        ids.extend(index[ch] for ch in text.replace("\t", "    ") if ch in index)
        ids.append(0)
    return np.asarray(ids, np.int64)


def train(stream: np.ndarray, cfg: TinyLMConfig, minutes: float, seed: int) -> TinyLM:
    """AdamW on random windows of the stream, with a cosine learning rate over a time budget."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TinyLM(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.95))
    budget, start, step = minutes * 60.0, time.perf_counter(), 0
    while (elapsed := time.perf_counter() - start) < budget:
        for group in opt.param_groups:
            warm = min(1.0, (step + 1) / 50)
            group["lr"] = 3e-3 * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * elapsed / budget)))
        starts = rng.integers(0, len(stream) - SEQ_LEN - 1, BATCH)
        window = torch.from_numpy(np.stack([stream[s:s + SEQ_LEN + 1] for s in starts]))
        logits = model(window[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), window[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0:
            print(f"step {step:5d}  {elapsed:6.0f} s  loss {loss.item():.3f}", flush=True)
        step += 1
    return model.eval()


def sample_greedy(model: TinyLM, prompt: str, n: int) -> str:
    index = {ch: i + 1 for i, ch in enumerate(ALPHABET)}
    ids = [index[ch] for ch in prompt]
    with torch.no_grad():
        for _ in range(n):
            nxt = int(model(torch.tensor([ids]))[0, -1].argmax())
            if nxt == 0:
                break
            ids.append(nxt)
    return "".join(ALPHABET[i - 1] for i in ids)


def write_reference(model: TinyLM, path: Path) -> None:
    """torch's logits at every position of one text: what the exported nets must reproduce."""
    index = {ch: i + 1 for i, ch in enumerate(ALPHABET)}
    ids = [index[ch] for ch in REFERENCE_TEXT]
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].numpy()
    np.savez_compressed(path, ids=np.asarray(ids, np.int32), logits=logits.astype(np.float32))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=12.0,
                    help="training time budget (default 12: the shipped model, ~900 steps on a busy 2-core CPU)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint", type=Path, help="torch weights: loaded if the file exists (no training), "
                    "else written after training")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "data" / "tiny_lm")
    args = ap.parse_args(argv)

    torch.set_num_threads(max(1, torch.get_num_threads()))
    stream = encode_corpus(corpus_texts())
    print(f"corpus: {len(stream)} tokens")
    cfg = TinyLMConfig()
    if args.checkpoint is not None and args.checkpoint.exists():
        model = TinyLM(cfg)
        model.load_state_dict(torch.load(args.checkpoint))
        model.eval()
    else:
        model = train(stream, cfg, args.minutes, args.seed)
        if args.checkpoint is not None:
            torch.save(model.state_dict(), args.checkpoint)
    print(repr(sample_greedy(model, "Return the ", 120)))

    export_tiny_lm(model, args.out)
    (args.out / "tokenizer.json").write_text(json.dumps(
        {"kind": "char", "specials": [END_OF_TEXT], "alphabet": ALPHABET}, indent=1) + "\n")
    (args.out / "config.json").write_text(json.dumps(
        {**cfg.as_dict(), "max_context": MAX_CONTEXT, "stop_tokens": [0], "trained_on": "Zen of Python and "
         f"docstrings of Python {sys.version.split()[0]} stdlib modules: {', '.join(CORPUS_MODULES)}"},
        indent=1) + "\n")
    write_reference(model, args.out / "reference.npz")
    print(f"wrote {sorted(p.name for p in args.out.iterdir())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
