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
_NUMBER_TEXT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = re.compile(f"^{_NUMBER_TEXT}$")
# A plain character class: a repeated group would make `re` keep a backtracking
# stack proportional to the array (100 MB for a hostile 200k-value array).
_NUMBER_LIST_CHARS = re.compile(r"^[0-9eE+\-.,]*$")


def _is_float_token(tok: str) -> bool:
    return any(ch in tok for ch in ".eE")


class _Tokens:
    """Whitespace tokens with their line numbers (ncnn's parse is token-based).

    Lines are split only when reached, so memory stays proportional to one line.
    """

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self._lines = iter(enumerate(text.splitlines(), 1))
        self._line: list[str] = []
        self._lineno = 0
        self._i = 0

    def _fill(self) -> bool:
        while self._i >= len(self._line):
            nxt = next(self._lines, None)
            if nxt is None:
                return False
            self._lineno, line = nxt
            self._line, self._i = line.split(), 0
        return True

    def peek(self) -> tuple[str, int] | None:
        return (self._line[self._i], self._lineno) if self._fill() else None

    def next(self, what: str) -> tuple[str, int]:
        if not self._fill():
            raise ParamError(f"{self.source}:{max(1, self._lineno)}: file ends where {what} was expected")
        self._i += 1
        return self._line[self._i - 1], self._lineno

    def next_int(self, what: str, lo: int = 0, hi: int = 1 << 30) -> int:
        tok, line = self.next(what)
        try:
            value = int(tok)
        except ValueError:
            raise ParamError(f"{self.source}:{line}: expected {what} (an integer), got {tok[:40]!r}") from None
        if not lo <= value <= hi:
            raise ParamError(f"{self.source}:{line}: {what} must be in {lo}..{hi}, got {value}")
        return value


def _parse_number(tok: str, where: str) -> int | float:
    if not _NUMBER.match(tok):
        raise ParamError(f"{where}expected a number, got {tok[:40]!r}")
    if _is_float_token(tok):
        with np.errstate(over="ignore"):  # 1e39 becomes inf, as ncnn's float parse gives
            return float(np.float32(float(tok)))
    value = int(tok)
    if not -(1 << 31) <= value < (1 << 31):
        raise ParamError(f"{where}integer {tok} does not fit in 32 bits")
    return value


def _parse_array(text: str, where: str) -> np.ndarray:
    """The comma-separated numbers of an array param; any float element makes a float array.

    Checked by one regex and parsed by numpy in one go, so a hostile array of a
    million values costs milliseconds and a few bytes per value.
    """
    if text.count(",") >= _MAX_ARRAY:
        raise ParamError(f"{where}array of {text.count(',') + 1} values exceeds the {_MAX_ARRAY} limit")
    try:
        if not _NUMBER_LIST_CHARS.match(text):
            raise ValueError
        with np.errstate(over="ignore"):  # 1e39 becomes inf, as ncnn's float parse gives
            values = np.array(text.split(","), dtype=np.float64)
    except ValueError:
        bad = next((t for t in text.split(",") if not _NUMBER.match(t)), "?")
        raise ParamError(f"{where}expected a number in array, got {bad[:40]!r}") from None
    if _is_float_token(text):
        with np.errstate(over="ignore"):
            return values.astype(np.float32)
    if values.size and (values.min() < -(1 << 31) or values.max() >= (1 << 31)):
        raise ParamError(f"{where}array integer does not fit in 32 bits")
    return values.astype(np.int32)  # exact: float64 holds every int32


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
        return _parse_array(first, where)
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
            count_text, _, values_text = value_text.partition(",")
            try:
                count = int(count_text)
            except ValueError:
                raise ParamError(f"{where}array param {key} needs a count first, got {count_text[:40]!r}") from None
            given = values_text.count(",") + 1 if values_text else 0
            if count < 0 or count != given:
                raise ParamError(f"{where}array param {key} declares {count} values but has {given}")
            pd.set(pid, _parse_array(values_text, where) if count else np.zeros(0, np.int32))
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
