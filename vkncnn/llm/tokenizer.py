"""Tokenizers for generation: anything with encode(str) -> list[int] and decode(list[int]) -> str.

A real LLM brings its own tokenizer (a BPE vocabulary); Generator only needs the two calls,
so any object or pair of callables with them fits. CharTokenizer is the one the tiny
character-level model uses: one token per character of a fixed alphabet, plus named special
tokens (such as an end-of-text token) that decode to nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import ArgumentTypeError, ModelFileError, ModelFormatError, TokenizerError


class Tokenizer(Protocol):
    """What Generator calls: text to token ids and back."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class CharTokenizer:
    """One token per character: special tokens first (ids 0..), then the alphabet in order."""

    def __init__(self, alphabet: str, specials: Sequence[str] = ()) -> None:
        if not isinstance(alphabet, str) or not alphabet or len(set(alphabet)) != len(alphabet):
            raise ArgumentTypeError(f"CharTokenizer: expected an alphabet of distinct characters (str), "
                                    f"got {alphabet!r:.60}")
        self.specials = list(specials)
        self.alphabet = alphabet
        self._ids = {ch: i + len(self.specials) for i, ch in enumerate(alphabet)}
        self.vocab_size = len(self.specials) + len(alphabet)

    @classmethod
    def from_file(cls, path: str | Path) -> CharTokenizer:
        """A tokenizer.json as tools/dev/train_tiny_lm.py writes it ({"alphabet": ..., "specials": [...]})."""
        try:
            spec = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ModelFileError(f"{path}: cannot read the tokenizer ({exc.strerror or exc})") from exc
        except ValueError as exc:
            raise ModelFormatError(f"{path}: not a JSON tokenizer file ({exc})") from exc
        if not isinstance(spec, dict) or spec.get("kind") != "char" or not isinstance(spec.get("alphabet"), str):
            raise ModelFormatError(f"{path}: expected a character tokenizer "
                                   f'{{"kind": "char", "alphabet": ...}}, got {str(spec)[:60]}')
        return cls(spec["alphabet"], spec.get("specials", []))

    def token_id(self, token: str) -> int:
        """The id of a special token or of one character."""
        if token in self.specials:
            return self.specials.index(token)
        if token in self._ids:
            return self._ids[token]
        raise TokenizerError(f"token {token!r:.40}: not in this tokenizer (specials {self.specials})")

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise ArgumentTypeError(f"encode(): expected text (str), got {type(text).__name__}")
        ids = []
        for pos, ch in enumerate(text):
            if ch not in self._ids:
                raise TokenizerError(f"encode(): character {ch!r} at position {pos} is not in the alphabet "
                                     f"({len(self.alphabet)} characters: {self.alphabet[:40]!r}...)")
            ids.append(self._ids[ch])
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        first = len(self.specials)
        return "".join(self.alphabet[i - first] for i in ids if first <= i < self.vocab_size)


@dataclass(frozen=True)
class FunctionTokenizer:
    """A tokenizer made of two callables, for tokenizers that are not objects with encode/decode."""

    encode: Callable[[str], list[int]]
    decode: Callable[[Sequence[int]], str]
