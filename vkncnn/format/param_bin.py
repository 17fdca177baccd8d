"""Parser of ncnn's binary .param.bin format (ncnn2mem output).

Little-endian int32 words: magic, layer_count, blob_count, then per layer
type_index, bottom_count, top_count, blob indices, and params until id -233.
Binary files hold no names: layers and blobs are addressed by index.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParamError
from ..layer_types import CUSTOM_BIT, LAYER_TYPE_NAMES
from .graph_spec import MAGIC, MAX_BLOB_COUNT, MAX_LAYER_COUNT, GraphSpec, LayerSpec
from .paramdict import MAX_PARAM_COUNT, ParamDict, RawWord

_END = -233
_ARRAY_BASE = -23300
_STRING_BASE = -23400


class _Words:
    def __init__(self, data: bytes, source: str) -> None:
        usable = len(data) - len(data) % 4
        self.words = np.frombuffer(data[:usable], dtype="<i4")
        self.source = source
        self.pos = 0

    def take(self, n: int, what: str) -> np.ndarray:
        if n < 0 or self.pos + n > len(self.words):
            raise ParamError(f"{self.source}: word {self.pos}: file ends where {what} "
                             f"({n} words) was expected")
        out = self.words[self.pos:self.pos + n]
        self.pos += n
        return out

    def one(self, what: str) -> int:
        return int(self.take(1, what)[0])


def _type_name(index: int, custom_names: dict[int, str]) -> str:
    if index & CUSTOM_BIT:
        return custom_names.get(index, f"custom{index & ~CUSTOM_BIT}")
    if not 0 <= index < len(LAYER_TYPE_NAMES):
        return f"<type index {index}>"
    return LAYER_TYPE_NAMES[index]


def _read_params(words: _Words, where: str) -> ParamDict:
    pd = ParamDict()
    while True:
        key = words.one("a param id")
        if key == _END:
            return pd
        if 0 <= key < MAX_PARAM_COUNT:
            pd.set(key, RawWord(words.one(f"the value of param {key}")))
        elif _ARRAY_BASE - MAX_PARAM_COUNT < key <= _ARRAY_BASE:
            n = words.one(f"the length of array param {key}")
            pd.set_raw_array(_ARRAY_BASE - key, words.take(n, f"array param {key}").copy())
        elif _STRING_BASE - MAX_PARAM_COUNT < key <= _STRING_BASE:
            n = words.one(f"the length of string param {key}")
            if not 0 <= n <= 255:
                raise ParamError(f"{where}string param length {n} outside 0..255")
            raw = words.take((n + 3) // 4, f"string param {key}").tobytes()[:n]
            pd.set(_STRING_BASE - key, raw.decode("utf-8", "replace"))
        else:
            raise ParamError(f"{where}invalid param id {key} (expected 0..31, an array or string id, "
                             "or -233 to end)")


HEADER_BYTES = 12  # magic, layer count, blob count


def check_header(head: bytes, source: str) -> tuple[int, int]:
    """(layer_count, blob_count) from the first 12 bytes, checked: a caller reading a
    stream refuses a wrong or absurd header before reading the rest."""
    words = _Words(head[:HEADER_BYTES], source)
    magic = words.one("the magic number")
    if magic != MAGIC:
        raise ParamError(f"{source}: expected magic number {MAGIC}, got {magic}")
    layer_count = words.one("layer count")
    blob_count = words.one("blob count")
    for what, count, cap in (("layer", layer_count, MAX_LAYER_COUNT), ("blob", blob_count, MAX_BLOB_COUNT)):
        if count > cap:
            raise ParamError(f"{source}: {what} count {count} is above vkncnn's limit of {cap}, far above "
                             "any real model (see format/graph_spec.py)")
        if count <= 0:
            raise ParamError(f"{source}: {what} count must be positive, got {count}")
    return layer_count, blob_count


def parse_param_bin(data: bytes, source: str = "<param.bin>",
                    custom_names: dict[int, str] | None = None) -> GraphSpec:
    layer_count, blob_count = check_header(data, source)
    words = _Words(data, source)
    words.pos = HEADER_BYTES // 4
    # Every layer takes at least 4 words, every blob index one: bound counts by file size.
    if not 0 < layer_count <= len(words.words) // 4:
        raise ParamError(f"{source}: layer count {layer_count} impossible for a {len(data)}-byte file")
    if not 0 < blob_count <= len(words.words) * 4:
        raise ParamError(f"{source}: blob count {blob_count} impossible for a {len(data)}-byte file")
    spec = GraphSpec(source, layer_count, blob_count)
    for i in range(layer_count):
        where = f"{source}: layer #{i}: "
        type_index = words.one(f"layer #{i} type index")
        n_bottom = words.one(f"layer #{i} bottom count")
        n_top = words.one(f"layer #{i} top count")
        if not (0 <= n_bottom <= blob_count and 0 <= n_top <= blob_count):
            raise ParamError(f"{where}bottom/top counts {n_bottom}/{n_top} outside 0..{blob_count}")
        indices = words.take(n_bottom + n_top, f"layer #{i} blob indices")
        bad = [int(b) for b in indices if not 0 <= b < blob_count]
        if bad:
            raise ParamError(f"{where}blob index {bad[0]} outside 0..{blob_count - 1}")
        params = _read_params(words, where)
        names = [str(int(b)) for b in indices]
        spec.layers.append(LayerSpec(_type_name(type_index, custom_names or {}), "", names[:n_bottom],
                                     names[n_bottom:], params, i, type_index))
    return spec
