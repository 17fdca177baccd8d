"""One decoder step with the KV cache held as Mats on the host, the way pyncnn code does it.

A step feeds the new tokens' embeddings, the mask, the RoPE tables and every layer's cached
keys and values (cache_k0, cache_v0, ...), and takes back the hidden states and the caches
with the new tokens appended (out_cache_k0, ...). Those Mats go straight into the next step.
On the GPU path each step uploads and downloads the caches; device_step (decoder.py) takes
the same arguments and gives the same results with the caches kept on the device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BlobNotFoundError
from ..mat import Mat

DECODER_INPUTS = ("in0", "in1", "in2", "in3")  # embeddings, attention mask, RoPE cos, RoPE sin
DECODER_OUTPUT = "out0"


@dataclass
class MatCache:
    """The caches of one conversation: one Mat per cache blob (in cache_names order), and its length."""

    mats: list[Mat]
    length: int = 0


def cache_blob_names(decoder: Any) -> list[str]:
    """The decoder's cache inputs (cache_k0, cache_v0, ...), checked to each have an out_ twin."""
    inputs, outputs = decoder.input_names(), set(decoder.output_names())
    missing = [n for n in (*DECODER_INPUTS, DECODER_OUTPUT) if n not in inputs and n not in outputs]
    if missing:
        raise BlobNotFoundError(f"decoder: expected inputs {list(DECODER_INPUTS)} and output {DECODER_OUTPUT!r} "
                                f"(ncnn's decoder form), missing {missing}; inputs are {inputs[:8]}")
    names = [n for n in inputs if n.startswith("cache_")]
    unpaired = [n for n in names if "out_" + n not in outputs]
    if not names or unpaired:
        raise BlobNotFoundError(f"decoder: expected KV-cache inputs cache_k<i>/cache_v<i> with outputs "
                                f"out_cache_k<i>/out_cache_v<i>, got inputs {names[:6]} "
                                f"(without an output: {unpaired[:6]})")
    return names


def empty_cache(names: list[str], mat_type: Callable[..., Any] = Mat) -> MatCache:
    return MatCache([mat_type() for _ in names])


def decoder_step(decoder: Any, names: list[str], embeddings: np.ndarray, mask: np.ndarray, cos: np.ndarray,
                 sin: np.ndarray, cache: MatCache, mat_type: Callable[..., Any] = Mat) -> tuple[np.ndarray, MatCache]:
    """Run the new tokens through the decoder: (hidden state of the last token (1, hidden), grown cache)."""
    with decoder.create_extractor() as ex:
        for name, value in zip(DECODER_INPUTS, (embeddings, mask, cos, sin)):
            ex.input(name, mat_type(value))
        for name, mat in zip(names, cache.mats):
            ex.input(name, mat)
        grown = [ex.extract("out_" + name)[1] for name in names]
        hidden = np.array(ex.extract(DECODER_OUTPUT)[1])
    return hidden[-1:], MatCache(grown, cache.length + len(embeddings))
