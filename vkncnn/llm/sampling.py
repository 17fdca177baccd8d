"""Choosing the next token from logits: greedy, temperature, top-k, top-p, repetition penalty.

All of it is numpy on one row of logits (the vocabulary), in float64 so that the same seed
gives the same tokens whichever path (numpy or GPU) produced the logits, as long as the
logits themselves agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..array_checks import is_int
from ..errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class SamplingParams:
    """temperature 0 is greedy (argmax; top_k/top_p unused). top_k 0 and top_p 1.0 mean no cut.

    repetition_penalty > 1 makes tokens already in the text less likely (logit / p when
    positive, x p when negative, as CTRL and Hugging Face do); 1.0 leaves logits as they are.
    """

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    repetition_penalty: float = 1.0

    def __post_init__(self) -> None:
        for name in ("temperature", "top_p", "repetition_penalty"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise ArgumentTypeError(f"{name}: expected a number, got {type(value).__name__} {value!r:.40}")
            if not math.isfinite(value):
                raise ArgumentError(f"{name}: expected a finite number, got {value}")
        if self.temperature < 0:
            raise ArgumentError(f"temperature: expected >= 0 (0 is greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ArgumentError(f"top_p: expected 0 < top_p <= 1 (1 keeps every token), got {self.top_p}")
        if self.repetition_penalty <= 0:
            raise ArgumentError(f"repetition_penalty: expected > 0 (1 is none), got {self.repetition_penalty}")
        if not is_int(self.top_k) or isinstance(self.top_k, bool):
            raise ArgumentTypeError(f"top_k: expected an int, got {type(self.top_k).__name__} {self.top_k!r:.40}")
        if self.top_k < 0:
            raise ArgumentError(f"top_k: expected >= 0 (0 keeps every token), got {self.top_k}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def penalize_repeats(logits: np.ndarray, history: Sequence[int], penalty: float) -> np.ndarray:
    if penalty == 1.0 or not len(history):
        return logits
    seen = np.unique(np.asarray(history, np.int64))
    seen = seen[(seen >= 0) & (seen < len(logits))]
    out = logits.copy()
    out[seen] = np.where(out[seen] > 0, out[seen] / penalty, out[seen] * penalty)
    return out


def keep_top_k(logits: np.ndarray, k: int) -> np.ndarray:
    if k == 0 or k >= len(logits):
        return logits
    # a stable sort keeps the lowest id first among equal logits, as argmax does: top_k=1 is greedy
    order = np.argsort(-logits, kind="stable")
    out = np.full_like(logits, -np.inf)
    out[order[:k]] = logits[order[:k]]
    return out


def keep_top_p(probs: np.ndarray, p: float) -> np.ndarray:
    """The smallest set of most likely tokens whose probabilities reach p (at least one), renormalised."""
    if p >= 1.0:
        return probs
    order = np.argsort(-probs, kind="stable")
    cumulative = np.cumsum(probs[order])
    keep = int(np.searchsorted(cumulative, p)) + 1  # first index whose sum reaches p, inclusive
    out = np.zeros_like(probs)
    out[order[:keep]] = probs[order[:keep]]
    return out / out.sum()


def next_token(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator,
               history: Sequence[int] = ()) -> int:
    """One token id from a row of logits over the vocabulary.

    A logit of +inf takes all the probability (shared with any other +inf); NaN, no logits
    or only -inf leave nothing to choose from: ArgumentError, where numpy would pick token 0
    or fail on NaN probabilities."""
    logits = np.asarray(logits, np.float64).reshape(-1)
    top = _checked_top(logits)
    logits = penalize_repeats(logits, history, params.repetition_penalty)  # keeps +inf at +inf
    if params.greedy:
        return int(np.argmax(logits))
    if top == np.inf:
        logits = np.where(np.isposinf(logits), 0.0, -np.inf)
    logits = keep_top_k(logits / params.temperature, params.top_k)
    probs = np.exp(logits - logits.max())
    probs = keep_top_p(probs / probs.sum(), params.top_p)
    return int(rng.choice(len(probs), p=probs))


def _checked_top(logits: np.ndarray) -> float:
    """The largest logit, after refusing logits that leave no choice. One pass over the
    vocabulary (a max, which NaN propagates through) on the way of every token; the NaN's
    position is looked for only when there is one."""
    if logits.size == 0:
        raise ArgumentError("logits: expected one value per token of the vocabulary, got none")
    top = float(logits.max())
    if math.isnan(top):
        nan = np.flatnonzero(np.isnan(logits))
        raise ArgumentError(f"logits: expected numbers, got NaN at token {int(nan[0])} ({nan.size} of "
                            f"{logits.size}): the model's output overflowed or read NaN inputs")
    if top == -math.inf:
        raise ArgumentError(f"logits: every one of the {logits.size} tokens is -inf: nothing to choose from")
    return top
