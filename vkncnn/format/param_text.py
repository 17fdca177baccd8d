"""Parser of ncnn's text .param format.

    7767517
    <layer_count> <blob_count>
    <type> <name> <bottom_count> <top_count> <bottoms...> <tops...> <id=value ...>

Values: int (`0=3`), float (`1=1e-5`, `2=.5`), string (`6="a b"`, `9=w*2`),
arrays in the new form (`3=1,2,3`) and the old one (`-23303=3,1,2,3`).
Every error names the file and line and says what was expected.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import ParamError
from .graph_spec import MAGIC, GraphSpec, LayerSpec
from .paramdict import MAX_PARAM_COUNT, ParamDict

_ARRAY_KEY_BASE = -23300
_MAX_NAME = 255
_MAX_ARRAY = 1 << 20  # no real param array comes close; bounds hostile files
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _is_float_token(tok: str) -> bool:
    return any(ch in tok for ch in ".eE")


class _Tokens:
    """Whitespace tokens with the line each came from (ncnn's parse is token-based)."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.items: list[tuple[str, int]] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            self.items.extend((tok, lineno) for tok in line.split())
        self.pos = 0

    def peek(self) -> tuple[str, int] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def next(self, what: str) -> tuple[str, int]:
        if self.pos >= len(self.items):
            last = self.items[-1][1] if self.items else 1
            raise ParamError(f"{self.source}:{last}: file ends where {what} was expected")
        self.pos += 1
        return self.items[self.pos - 1]

    def next_int(self, what: str, lo: int = 0, hi: int = 1 << 30) -> int:
        tok, line = self.next(what)
        try:
            value = int(tok)
        except ValueError:
            raise ParamError(f"{self.source}:{line}: expected {what} (an integer), got {tok!r}") from None
        if not lo <= value <= hi:
            raise ParamError(f"{self.source}:{line}: {what} must be in {lo}..{hi}, got {value}")
        return value


def _parse_number(tok: str, where: str) -> int | float:
    if not _NUMBER.match(tok):
        raise ParamError(f"{where}expected a number, got {tok!r}")
    if _is_float_token(tok):
        return float(np.float32(float(tok)))
    value = int(tok)
    if not -(1 << 31) <= value < (1 << 31):
        raise ParamError(f"{where}integer {tok} does not fit in 32 bits")
    return value


def _parse_array(items: list[str], where: str) -> np.ndarray:
    if len(items) > _MAX_ARRAY:
        raise ParamError(f"{where}array of {len(items)} values exceeds the {_MAX_ARRAY} limit")
    values = [_parse_number(t, where) for t in items]
    if any(isinstance(v, float) for v in values):
        return np.asarray(values, dtype=np.float32)
    return np.asarray(values, dtype=np.int32)


def _read_value(tokens: _Tokens, first: str, where: str):
    """The value after `id=`; quoted strings may continue over several tokens."""
    if first.startswith('"'):
        text = first
        while not (len(text) >= 2 and text.endswith('"')):
            tok, _ = tokens.next('the closing quote of a string param')
            text += " " + tok
        if len(text) > _MAX_NAME + 2:
            raise ParamError(f"{where}string param longer than {_MAX_NAME} characters")
        return text[1:-1]
    if first[:1].isalpha():
        if len(first) > _MAX_NAME:
            raise ParamError(f"{where}string param longer than {_MAX_NAME} characters")
        return first
    if "," in first:
        return _parse_array([t for t in first.split(",")], where)
    return _parse_number(first, where)


def _parse_params(tokens: _Tokens, spec_where: str) -> ParamDict:
    pd = ParamDict()
    while True:
        item = tokens.peek()
        if item is None or "=" not in item[0] or not re.match(r"^-?\d+=", item[0]):
            return pd
        tok, line = tokens.next("a param")
        where = f"{tokens.source}:{line}: {spec_where}"
        key_text, _, value_text = tok.partition("=")
        key = int(key_text)
        if key <= _ARRAY_KEY_BASE:  # old-style array: -23300-id=count,v1,v2,...
            pid = _ARRAY_KEY_BASE - key
            if not 0 <= pid < MAX_PARAM_COUNT:
                raise ParamError(f"{where}array param id {pid} outside 0..{MAX_PARAM_COUNT - 1}")
            parts = value_text.split(",")
            try:
                count = int(parts[0])
            except ValueError:
                raise ParamError(f"{where}array param {key} needs a count first, got {parts[0]!r}") from None
            if count < 0 or count != len(parts) - 1:
                raise ParamError(f"{where}array param {key} declares {count} values but has {len(parts) - 1}")
            pd.set(pid, _parse_array(parts[1:], where) if count else np.zeros(0, np.int32))
            continue
        if not 0 <= key < MAX_PARAM_COUNT:
            raise ParamError(f"{where}param id {key} outside 0..{MAX_PARAM_COUNT - 1}")
        if value_text == "":
            raise ParamError(f"{where}param {key} has no value")
        pd.set(key, _read_value(tokens, value_text, where))


def parse_param_text(text: str, source: str = "<param>") -> GraphSpec:
    tokens = _Tokens(text, source)
    magic_tok, line = tokens.next("the magic number 7767517")
    if magic_tok != str(MAGIC):
        raise ParamError(f"{source}:{line}: expected magic number {MAGIC}, got {magic_tok[:20]!r} "
                         "(not an ncnn .param, or one too old: regenerate it)")
    layer_count = tokens.next_int("layer count", 1)
    blob_count = tokens.next_int("blob count", 1)
    spec = GraphSpec(source, layer_count, blob_count)
    for i in range(layer_count):
        if tokens.peek() is None:
            raise ParamError(f"{source}: header declares {layer_count} layers but the file "
                             f"ends after {i}")
        type_name, line = tokens.next("a layer type")
        if not type_name[:1].isalpha() and not type_name[:1] == "_":
            raise ParamError(f"{source}:{line}: expected a layer type name, got {type_name[:40]!r}")
        name, _ = tokens.next(f"the name of layer {type_name}")
        if len(type_name) > _MAX_NAME or len(name) > _MAX_NAME:
            raise ParamError(f"{source}:{line}: layer type/name longer than {_MAX_NAME} characters")
        where = f"layer {name!r} ({type_name}): "
        n_bottom = tokens.next_int(f"bottom count of layer {name!r}", 0, blob_count)
        n_top = tokens.next_int(f"top count of layer {name!r}", 0, blob_count)
        bottoms = [tokens.next(f"bottom blob name of layer {name!r}")[0] for _ in range(n_bottom)]
        tops = [tokens.next(f"top blob name of layer {name!r}")[0] for _ in range(n_top)]
        for blob in bottoms + tops:
            if len(blob) > _MAX_NAME:
                raise ParamError(f"{source}:{line}: {where}blob name longer than {_MAX_NAME} characters")
        params = _parse_params(tokens, where)
        spec.layers.append(LayerSpec(type_name, name, bottoms, tops, params, line))
    return spec
