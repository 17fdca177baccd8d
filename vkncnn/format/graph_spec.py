"""The parsed form of a .param file, before any layer object exists."""

from __future__ import annotations

from dataclasses import dataclass, field

from .paramdict import ParamDict

MAGIC = 7767517

# Header limits, checked before anything after the header is read. ncnn itself only
# requires both counts to be positive (then sizes its layer and blob arrays by them), so
# these caps are vkncnn's own. The largest models here are pnnx LLM decoders of 757 to
# 1,129 layers (qwen3 0.6B: 28 blocks, 1,017 layers, 1,405 blobs); an 80-block decoder of
# that shape has ~3,000, so 65,536 leaves a 20x margin over the largest. A net costs
# Python objects for every layer, so without a cap a hostile file of a million layers took
# a long time and much memory to load, while a chain at the cap still loads in seconds; a
# header past the cap is refused after reading one chunk (figures: docs/perf-notes.md,
# "Header caps of a .param file"). Blobs: 1.0-1.45 per layer in every shipped model (Split
# and Slice fan out); 4x the layer cap leaves room for any such fan-out.
MAX_LAYER_COUNT = 1 << 16
MAX_BLOB_COUNT = 1 << 18


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
