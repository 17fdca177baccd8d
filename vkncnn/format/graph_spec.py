"""The parsed form of a .param file, before any layer object exists."""

from __future__ import annotations

from dataclasses import dataclass, field

from .paramdict import ParamDict

MAGIC = 7767517


@dataclass
class LayerSpec:
    type: str
    name: str
    bottoms: list[str]
    tops: list[str]
    params: ParamDict
    line: int | None = None  # text: 1-based line; binary: layer ordinal
    type_index: int = -1  # binary files: ncnn's LayerType index


@dataclass
class GraphSpec:
    source: str
    layer_count: int
    blob_count: int
    layers: list[LayerSpec] = field(default_factory=list)
