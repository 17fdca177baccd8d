"""Text generation with an ncnn LLM decoder: prefill the prompt, then one token per step.

    gen = Generator(decoder_net, proj_out_net, embed_net, head_dim=32, tokenizer=tok)
    text = gen.generate_text("Return the ", max_new_tokens=40)

The decoder is in ncnn's decoder form (see mat_cache_step.py); proj_out maps a hidden state
to logits; the embedding is a Net (int32 token ids in0 -> embeddings out0), a (vocab,
hidden) array, or a callable ids -> (len, hidden) array. Each of the nets runs on the path
its own opt.use_vulkan_compute chose. Nets of the ncnn pip package work too, given
mat_type=ncnn.Mat. Only the last position's hidden state goes through
proj_out: that is all the next token needs.

A vkncnn decoder on the GPU path keeps its KV cache on the device (decoder.py: device_step,
DeviceCache); any other decoder passes the caches as Mats (mat_cache_step.py: decoder_step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..array_checks import is_int
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..mat import Mat
from .decoder import Decoder, DeviceCache, device_cache_problem, device_head_step, device_step, head_problem
from .decoder_inputs import causal_mask, check_rope_base, rope_tables
from .mat_cache_step import MatCache, cache_blob_names, decoder_step, empty_cache
from .sampling import SamplingParams, next_token
from .tokenizer import Tokenizer

Embedding = Callable[[Sequence[int]], np.ndarray]
# what makes the Mats fed to a net: vkncnn.Mat, or ncnn.Mat for nets of the ncnn package
MatType = Callable[..., Any]


@dataclass
class Generation:
    """What generate() made: the new token ids, their text (with a tokenizer), and why it stopped."""

    tokens: list[int]
    text: str | None
    stop_reason: str  # "stop_token" or "max_new_tokens"
    logits: list[np.ndarray] = field(default_factory=list, repr=False)


def run_one(net: Any, value: np.ndarray, mat_type: MatType = Mat) -> np.ndarray:
    """in0 -> out0 through a net, with Extractor calls only (so pyncnn's nets work too)."""
    with net.create_extractor() as ex:
        ex.input("in0", mat_type(value))
        return np.array(ex.extract("out0")[1])


def net_embedding(net: Any, mat_type: MatType = Mat) -> Embedding:
    """A Net with an Embed layer: int32 ids in in0, embeddings out of out0."""
    return lambda ids: run_one(net, np.asarray(ids, np.int32), mat_type).reshape(len(ids), -1)


def table_embedding(table: np.ndarray) -> Embedding:
    table = np.array(table, np.float32, copy=True)  # ours: later changes to the caller's array do not leak in
    if table.ndim != 2:
        raise ArgumentError(f"embedding table: expected shape (vocab, hidden), got {table.shape}")
    return lambda ids: table[np.asarray(ids, np.int64)]


class Generator:
    """Prefill and decode with a KV cache; greedy or sampled; streaming or all at once."""

    def __init__(self, decoder: Any, proj_out: Any, embedding: Embedding | Any, *, head_dim: int,
                 rope_base: float = 10000.0, tokenizer: Tokenizer | None = None, vocab_size: int | None = None,
                 stop_tokens: Sequence[int] = (),
                 max_context: int | None = None, step: Callable | None = None, mat_type: MatType = Mat) -> None:
        if not is_int(head_dim) or head_dim <= 0 or head_dim % 2:
            raise ArgumentError(f"head_dim: expected a positive even int, got {head_dim!r:.40}")
        self.decoder, self.proj_out = decoder, proj_out
        self.cache_names = cache_blob_names(decoder)
        if callable(getattr(embedding, "create_extractor", None)):
            self.embed = net_embedding(embedding, mat_type)
        elif isinstance(embedding, np.ndarray):
            self.embed = table_embedding(embedding)
            vocab_size = vocab_size or len(embedding)
        elif callable(embedding):
            self.embed = embedding
        else:
            raise ArgumentTypeError(f"embedding: expected a Net, a (vocab, hidden) array or a callable, "
                                    f"got {type(embedding).__name__}")
        rope_base = check_rope_base(rope_base, "rope_base")
        if max_context is not None and (not is_int(max_context) or max_context <= 0):
            raise ArgumentError(f"max_context: expected a positive int or None, got {max_context!r:.40}")
        if vocab_size is not None and (not is_int(vocab_size) or vocab_size <= 0):
            raise ArgumentError(f"vocab_size: expected a positive int or None, got {vocab_size!r:.40}")
        if tokenizer is not None and not (callable(getattr(tokenizer, "encode", None))
                                          and callable(getattr(tokenizer, "decode", None))):
            raise ArgumentTypeError(f"tokenizer: expected an object with encode() and decode() "
                                    f"(FunctionTokenizer wraps two callables), got {type(tokenizer).__name__}")
        self.head_dim, self.rope_base = int(head_dim), float(rope_base)
        self.tokenizer, self.vocab_size = tokenizer, vocab_size
        self.stop_tokens = self._token_list(stop_tokens, "stop_tokens")
        self.max_context = max_context
        if step is None:  # the cache on the device where the decoder can keep it there, else Mats
            step = device_step if mat_type is Mat and device_cache_problem(decoder) is None else decoder_step
        self.step = step  # the per-step function (decoder_step, device_step or the caller's own)
        self.mat_type = mat_type  # the Mat class of the nets' module (vkncnn's, or the ncnn package's)
        self._spare: DeviceCache | None = None  # device buffers a finished generation left, for the next

    # -- the two phases ---------------------------------------------------------------
    def forward(self, ids: Sequence[int], cache: MatCache | DeviceCache
                ) -> tuple[np.ndarray, MatCache | DeviceCache]:
        """Feed ids after what `cache` holds: (logits of the last position (vocab,), the grown cache)."""
        ids = self._token_list(ids, "forward(): ids")
        if not ids:
            raise ArgumentError("forward(): ids: expected at least one token, got none")
        past, new = cache.length, len(ids)
        cos, sin = rope_tables(past, new, self.head_dim, self.rope_base)
        embeddings = np.ascontiguousarray(self.embed(ids), np.float32)
        if embeddings.ndim != 2 or len(embeddings) != new:
            raise ShapeError(f"embedding: expected ({new}, hidden) for {new} token ids, got {embeddings.shape}")
        mask = causal_mask(new, past)
        if self.step is device_step and isinstance(cache, DeviceCache) and cache.decoder.head is self.proj_out:
            # proj_out as the Decoder's head: one submission a decode step, the hidden state on the device
            logits, cache = device_head_step(self.decoder, embeddings, mask, cos, sin, cache)
            return logits.reshape(-1), cache
        hidden, cache = self.step(self.decoder, self.cache_names, embeddings, mask, cos, sin, cache, self.mat_type)
        return run_one(self.proj_out, np.ascontiguousarray(hidden), self.mat_type).reshape(-1), cache

    def new_cache(self) -> MatCache | DeviceCache:
        """An empty cache for forward(): device buffers of its own with device_step, else Mats."""
        if self.step is device_step:
            head = self.proj_out if head_problem(self.decoder, self.proj_out) is None else None
            return DeviceCache(Decoder(self.decoder, head=head))
        return empty_cache(self.cache_names, self.mat_type)

    def _take_cache(self) -> MatCache | DeviceCache:
        """A generation's cache: the device buffers an earlier one finished with, when there are some
        (their plans replay), else a new cache. Two generations at once each get their own."""
        spare, self._spare = self._spare, None
        return spare.restart() if spare is not None and self.step is device_step else self.new_cache()

    # -- generation -------------------------------------------------------------------
    def stream(self, prompt: str | Sequence[int], max_new_tokens: int = 64, *, temperature: float = 0.0,
               top_k: int = 0, top_p: float = 1.0, repetition_penalty: float = 1.0,
               stop_tokens: Sequence[int] | None = None, seed: int | None = None,
               logits_out: list | None = None) -> Iterator[int]:
        """Yield new token ids one by one; stops after max_new_tokens or before a stop token."""
        ids = self.prompt_ids(prompt)
        params = SamplingParams(temperature, top_k, top_p, repetition_penalty)
        stops = set(self.stop_tokens if stop_tokens is None else self._token_list(stop_tokens, "stop_tokens"))
        if not is_int(max_new_tokens) or max_new_tokens < 0:
            raise ArgumentError(f"max_new_tokens: expected an int >= 0, got {max_new_tokens!r:.40}")
        if self.max_context is not None and len(ids) + max_new_tokens > self.max_context:
            raise ArgumentError(f"prompt ({len(ids)} tokens) + max_new_tokens ({max_new_tokens}) exceed the "
                                f"model's context of {self.max_context} tokens")
        if seed is not None and not is_int(seed):
            raise ArgumentTypeError(f"seed: expected an int or None, got {type(seed).__name__}")
        return self._generate(ids, max_new_tokens, params, stops, np.random.default_rng(seed), logits_out)

    def _generate(self, ids: list[int], max_new_tokens: int, params: SamplingParams, stops: set[int],
                  rng: np.random.Generator, logits_out: list | None) -> Iterator[int]:
        if max_new_tokens == 0:
            return
        history = list(ids)
        cache = self._take_cache()
        try:
            logits, cache = self.forward(ids, cache)  # prefill: the whole prompt in one step
            for produced in range(max_new_tokens):
                if logits_out is not None:
                    logits_out.append(logits)
                token = next_token(logits, params, rng, history)
                if token in stops:
                    return
                yield token
                history.append(token)
                if produced + 1 < max_new_tokens:
                    logits, cache = self.forward([token], cache)  # decode: one token against the cache
        finally:
            if isinstance(cache, DeviceCache):
                self._spare = cache

    def generate(self, prompt: str | Sequence[int], max_new_tokens: int = 64, *,
                 on_token: Callable[[int], None] | None = None, **sampling: Any) -> Generation:
        """All new tokens at once (on_token, if given, sees each as it comes), their text and why it stopped."""
        logits: list[np.ndarray] = []
        tokens = []
        for token in self.stream(prompt, max_new_tokens, logits_out=logits, **sampling):
            tokens.append(token)
            if on_token is not None:
                on_token(token)
        reason = "max_new_tokens" if len(tokens) == max_new_tokens else "stop_token"
        text = self.tokenizer.decode(tokens) if self.tokenizer is not None else None
        return Generation(tokens, text, reason, logits)

    def generate_text(self, prompt: str | Sequence[int], max_new_tokens: int = 64, **sampling: Any) -> str:
        """The generated text only (needs a tokenizer)."""
        if self.tokenizer is None:
            raise ArgumentError("generate_text(): this Generator has no tokenizer; use generate() for token ids")
        return self.generate(prompt, max_new_tokens, **sampling).text

    # -- argument checks --------------------------------------------------------------
    def prompt_ids(self, prompt: str | Sequence[int]) -> list[int]:
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ArgumentTypeError("prompt: got text but this Generator has no tokenizer; pass token ids")
            ids = list(self.tokenizer.encode(prompt))
        else:
            ids = self._token_list(prompt, "prompt")
        if not ids:
            raise ArgumentError("prompt: expected at least one token, got none")
        return ids

    def _token_list(self, values, what: str) -> list[int]:
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, set, frozenset)):
            raise ArgumentTypeError(f"{what}: expected a sequence of token ids, got {type(values).__name__}")
        ids = list(values)
        bad = [v for v in ids if not is_int(v) or v < 0 or (self.vocab_size is not None and v >= self.vocab_size)]
        if bad:
            limit = f" below {self.vocab_size}" if self.vocab_size is not None else ""
            raise ArgumentError(f"{what}: expected token ids (ints >= 0{limit}), got {bad[0]!r:.40}")
        return [int(v) for v in ids]
