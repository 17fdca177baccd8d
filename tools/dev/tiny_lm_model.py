"""The tiny character-level language model of tools/data/tiny_lm/, in torch, and its training text.

A Llama-shaped decoder (RMSNorm, rotary position embedding, multi-head SDPA, SwiGLU MLP) at
toy size. It is written so that pnnx turns it into the decoder + proj_out form of ncnn's
LLM decoders: the decoder takes token embeddings, an additive attention mask and the RoPE
cos/sin tables (half the head dim wide) as inputs, so the same graph serves prefill and
decode once tools/dev/tiny_lm_export.py has given every SDPA its KV-cache inputs and outputs.

The training text ships with Python, under the PSF license: the Zen of Python (`this`) and
the docstrings of a fixed list of standard-library modules (deduplicated, ASCII only).
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
import inspect
import io
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

END_OF_TEXT = "<|end|>"
# token 0 ends a text; then newline and printable ASCII: 97 tokens, no tokenizer to download
ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))

CORPUS_MODULES = (
    "abc", "argparse", "bisect", "collections", "contextlib", "csv", "dataclasses", "decimal",
    "enum", "fractions", "functools", "heapq", "itertools", "json", "logging", "os", "pathlib",
    "pickle", "random", "re", "shutil", "statistics", "string", "subprocess", "tempfile",
    "textwrap", "threading", "typing", "unittest", "zipfile",
)


@dataclass(frozen=True)
class TinyLMConfig:
    vocab_size: int = len(ALPHABET) + 1
    hidden: int = 128
    layers: int = 3
    heads: int = 4
    mlp: int = 256
    rope_base: float = 10000.0
    rms_eps: float = 1e-6

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def as_dict(self) -> dict:
        return {**asdict(self), "head_dim": self.head_dim}


def corpus_texts() -> list[str]:
    """The training texts: the Zen of Python, then stdlib docstrings longer than 80 characters."""
    with contextlib.redirect_stdout(io.StringIO()):  # importing `this` prints the Zen
        import this  # lazy: only the training tool reads it
    texts = [codecs.decode(this.s, "rot13")]
    seen = set(texts)
    for module_name in CORPUS_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_"):
                continue
            doc = inspect.getdoc(obj)
            if not doc or len(doc) <= 80 or doc in seen or not doc.isascii():
                continue
            seen.add(doc)
            texts.append(doc)
    return texts


class RotaryAttention(nn.Module):
    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.heads, self.head_dim = cfg.heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, cfg.hidden, bias=False)
        self.k_proj = nn.Linear(cfg.hidden, cfg.hidden, bias=False)
        self.v_proj = nn.Linear(cfg.hidden, cfg.hidden, bias=False)
        self.o_proj = nn.Linear(cfg.hidden, cfg.hidden, bias=False)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], -1, self.heads, self.head_dim).transpose(1, 2)

    def rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # the rotate-half form pnnx fuses into one RotaryEmbed layer (a constant split point)
        x1, x2 = torch.tensor_split(x, (self.head_dim // 2,), dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = self.rotate(self.split_heads(self.q_proj(x)), cos, sin)
        k = self.rotate(self.split_heads(self.k_proj(x)), cos, sin)
        v = self.split_heads(self.v_proj(x))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(x.shape[0], -1, self.heads * self.head_dim))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(cfg.hidden, eps=cfg.rms_eps)
        self.attn = RotaryAttention(cfg)
        self.mlp_norm = nn.RMSNorm(cfg.hidden, eps=cfg.rms_eps)
        self.gate = nn.Linear(cfg.hidden, cfg.mlp, bias=False)
        self.up = nn.Linear(cfg.hidden, cfg.mlp, bias=False)
        self.down = nn.Linear(cfg.mlp, cfg.hidden, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), mask, cos, sin)
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyDecoder(nn.Module):
    """embeddings (b, seq, hidden), mask (seq, seq), cos/sin (seq, head_dim / 2) -> hidden states."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.layers))
        self.norm = nn.RMSNorm(cfg.hidden, eps=cfg.rms_eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
        for layer in self.layers:
            x = layer(x, mask, cos, sin)
        return self.norm(x)


class TinyLM(nn.Module):
    """Embedding table, decoder, and an output projection tied to the embedding table."""

    def __init__(self, cfg: TinyLMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.decoder = TinyDecoder(cfg)
        self.proj_out = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
        self.proj_out.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        seq = ids.shape[1]
        cos, sin = rope_tables(torch.arange(seq), self.cfg)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), 1)
        return self.proj_out(self.decoder(self.embed(ids), mask, cos, sin))


def rope_tables(positions: torch.Tensor, cfg: TinyLMConfig) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = cfg.rope_base ** (-torch.arange(0, cfg.head_dim, 2, dtype=torch.float64) / cfg.head_dim)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().float(), angles.sin().float()
