"""Parser of ncnn's text .param format.

    7767517
    <layer_count> <blob_count>
    <type> <name> <bottom_count> <top_count> <bottoms...> <tops...> <id=value ...>

Values: int (`0=3`), float (`1=1e-5`, `2=.5`), string (`6="a b"`, `9=w*2`),
arrays in the new form (`3=1,2,3`) and the old one (`-23303=3,1,2,3`).
Every error names the file and line and says what was expected. A file is parsed as it
is read, so an error (a header declaring absurd counts, a bad token on line 4 of a huge
file) is reported before the rest is read.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterable, Iterator

import numpy as np

from ..errors import ParamError
from .datareader import READ_CHUNK, DataReader, read_some
from .graph_spec import MAGIC, MAX_BLOB_COUNT, MAX_LAYER_COUNT, GraphSpec, LayerSpec
from .paramdict import MAX_PARAM_COUNT, ParamDict

_ARRAY_KEY_BASE = -23300
_MAX_NAME = 255
_MAX_ARRAY = 1 << 20  # no real param array comes close; bounds hostile files
_NUMBER_TEXT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = re.compile(f"^{_NUMBER_TEXT}$")
# A plain character class: a repeated group would make `re` keep a backtracking
# stack proportional to the array (100 MB for a hostile 200k-value array).
_NUMBER_LIST_CHARS = re.compile(r"^[0-9eE+\-.,]*$")
_TOKEN = re.compile(r"\S+")
_HEAD_TOKEN = re.compile(r"\S{0,21}")
_LONG_LINE = 1 << 16
_TOO_MANY = " (vkncnn's limit, far above any real model; see format/graph_spec.py)"


def _is_float_token(tok: str) -> bool:
    return any(ch in tok for ch in ".eE")


class _Tokens:
    """Whitespace tokens with their line numbers (ncnn's parse is token-based).

    Lines come from an iterator and are split only when reached, so memory stays
    proportional to one line and an error is reported as soon as it is read.
    """

    def __init__(self, lines: Iterator[tuple[int, str]], source: str) -> None:
        self.source = source
        self._lines = lines
        self._tokens: Iterator[str] = iter(())
        self._next: str | None = None
        self._lineno = 0

    def _fill(self) -> bool:
        while self._next is None:
            self._next = next(self._tokens, None)
            if self._next is not None:
                break
            nxt = next(self._lines, None)
            if nxt is None:
                return False
            self._lineno, line = nxt
            # a long line is tokenized as it is consumed: split() would make a Python
            # string of every token at once, ~30x the bytes of a hostile 200 MB line
            self._tokens = iter(line.split()) if len(line) < _LONG_LINE else \
                (m.group() for m in _TOKEN.finditer(line))
        return True

    def peek(self) -> tuple[str, int] | None:
        tok = self._next if self._fill() else None
        return None if tok is None else (tok, self._lineno)

    def next(self, what: str) -> tuple[str, int]:
        tok = self._next if self._fill() else None
        if tok is None:
            raise ParamError(f"{self.source}:{max(1, self._lineno)}: file ends where {what} was expected")
        self._next = None
        return tok, self._lineno

    def next_int(self, what: str, lo: int = 0, hi: int = 1 << 30, why: str = "") -> int:
        tok, line = self.next(what)
        try:
            value = int(tok)
        except ValueError:
            raise ParamError(f"{self.source}:{line}: expected {what} (an integer), got {tok[:40]!r}") from None
        if not lo <= value <= hi:
            raise ParamError(f"{self.source}:{line}: {what} must be in {lo}..{hi}, got {value}"
                             f"{why if value > hi else ''}")
        return value


def _numbered_lines(pieces: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, line) from text that arrives in pieces, with str.splitlines' idea of
    a line break; a line split over several pieces is joined once, when it ends."""
    partial: list[str] = []  # the start of a line whose break has not arrived yet
    lineno = 0
    carry = ""
    for piece in pieces:
        piece = carry + piece
        # a CR at the end may be the first half of a CRLF: decide with the next piece
        carry = "\r" if piece.endswith("\r") else ""
        if carry:
            piece = piece[:-1]
        lines = piece.splitlines(True)
        if not lines:
            continue
        last = lines.pop()
        if lines:
            lines[0] = "".join(partial) + lines[0]
            partial = []
            for line in lines:
                lineno += 1
                yield lineno, line
        if len(last.splitlines()[0]) != len(last):  # the piece ended with a line break
            lineno += 1
            yield lineno, "".join(partial) + last
            partial = []
        else:
            partial.append(last)
    if partial or carry:
        yield lineno + 1, "".join(partial) + carry


def _text_pieces(text: str) -> Iterator[str]:
    for start in range(0, len(text), READ_CHUNK):
        yield text[start:start + READ_CHUNK]


def _decoded_pieces(reader: DataReader, source: str, max_bytes: int) -> Iterator[str]:
    """UTF-8 text from a reader, a chunk at a time, refusing more than max_bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    consumed = 0
    while True:
        chunk = read_some(reader, READ_CHUNK)
        if consumed + len(chunk) > max_bytes:
            raise ParamError(f"{source}: larger than the {max_bytes}-byte limit for a .param file")
        held = len(decoder.getstate()[0])  # bytes of a character cut by the last chunk
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as e:
            raise ParamError(f"{source}: not UTF-8 text at byte {consumed - held + e.start} (a binary "
                             ".param? use load_param_bin)") from None
        consumed += len(chunk)
        if text:
            yield text
        if not chunk:
            return


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
            if len(text) > _MAX_NAME + 2:  # checked as it grows: an unclosed quote must not eat the file
                break
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
    """Parse .param text already in memory."""
    return _parse_pieces(_text_pieces(text), source)


def parse_param_reader(reader: DataReader, source: str, max_bytes: int) -> GraphSpec:
    """Parse a .param as it is read: the header is checked, and any error reported, before
    the rest of the file is read; reading stops after the last declared layer."""
    return _parse_pieces(_decoded_pieces(reader, source, max_bytes), source)


def _parse_pieces(pieces: Iterator[str], source: str) -> GraphSpec:
    first = next(pieces, "")
    _check_magic_prefix(first, source)
    return _parse(_Tokens(_numbered_lines(itertools.chain([first], pieces)), source), source)


def _check_magic_prefix(text: str, source: str) -> None:
    """Refuse, from the first chunk alone, text that cannot start with the magic number:
    otherwise a file with no line break (zeros, random bytes that happen to be UTF-8)
    would be read up to the size limit before its first token could be looked at."""
    start = len(text) - len(text.lstrip())
    match = _HEAD_TOKEN.match(text, start)  # \S{0,21} matches anywhere, if only the empty string
    head = match.group() if match else ""
    if head == str(MAGIC)[:len(head)]:
        return  # the magic, or a prefix of it (a short first read): _parse decides
    line = text.count("\n", 0, start) + 1
    raise ParamError(f"{source}:{line}: expected magic number {MAGIC}, got {head[:20]!r} "
                     "(not an ncnn .param, or one too old: regenerate it)")


def _parse(tokens: _Tokens, source: str) -> GraphSpec:
    magic_tok, line = tokens.next("the magic number 7767517")
    if magic_tok != str(MAGIC):
        raise ParamError(f"{source}:{line}: expected magic number {MAGIC}, got {magic_tok[:20]!r} "
                         "(not an ncnn .param, or one too old: regenerate it)")
    layer_count = tokens.next_int("layer count", 1, MAX_LAYER_COUNT, why=_TOO_MANY)
    blob_count = tokens.next_int("blob count", 1, MAX_BLOB_COUNT, why=_TOO_MANY)
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
