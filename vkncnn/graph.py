"""Graph: the layers of a loaded net and the blobs between them.

A Net builds one at load_param time; the numpy extractor and the GPU planner both read
it, and only through what is defined here: the layers in file order, the blobs with
their producer and consumers, lookups by name, and the schedule of what a blob needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import Error
from .mat import Mat


@dataclass
class Blob:
    """ncnn's Blob: name, producer, consumer, shape (a Mat of sizes, no data); `Blob()`
    constructs an empty one, as pyncnn's."""

    name: str = ""
    producer: int = -1
    consumer: int = -1  # the last consumer, as ncnn records it
    consumers: list[int] = field(default_factory=list)
    shape: Mat = field(default_factory=Mat)


class Graph:
    def __init__(self, source: str = "<param>") -> None:
        self.source = source        # where the .param came from, for messages
        self.layers: list = []      # vkncnn.Layer objects, in file order
        self.blobs: list[Blob] = []
        self.blob_index: dict[str, int] = {}

    # -- lookups ------------------------------------------------------------------------------
    def find_blob(self, name: str) -> int:
        """The index of the blob called `name`, or -1."""
        return self.blob_index.get(name, -1)

    def input_indexes(self) -> list[int]:
        return [top for layer in self.layers if layer.type == "Input" for top in layer.tops]

    def output_indexes(self) -> list[int]:
        """Blobs produced and never consumed, as ncnn's output_indexes."""
        return [i for i, b in enumerate(self.blobs) if b.producer != -1 and not b.consumers]

    def has_batch_layers(self) -> bool:
        """Whether a layer works on whole batches (`support_batch`, e.g. Reshape with a batch axis)."""
        return any(getattr(layer, "support_batch", False) for layer in self.layers)

    def is_input(self, blob: int) -> bool:
        producer = self.blobs[blob].producer
        return producer < 0 or self.layers[producer].type == "Input"

    # -- scheduling ---------------------------------------------------------------------------
    def schedule(self, target: int, available: Callable[[int], bool]) -> list[int]:
        """Layers to run for blob `target`, dependencies first: an iterative post-order walk,
        so a decoder of thousands of layers never meets Python's recursion limit.

        `available(blob)` says whether a blob exists already; a net input that is not
        there is an error naming it.
        """
        layers, blobs = self.layers, self.blobs
        order: list[int] = []
        visited: set[int] = set()
        if available(target):
            return order
        stack: list[tuple[int, int, bool]] = [(blobs[target].producer, target, False)]
        while stack:
            li, wanted, expanded = stack.pop()
            if li < 0:
                continue
            if expanded:
                order.append(li)
                continue
            if li in visited:
                continue
            visited.add(li)
            layer = layers[li]
            if layer.type == "Input" and not layer.bottoms:
                name = blobs[wanted].name
                raise Error(f"blob {name!r} is a net input but was not given: call input({name!r}, mat) first")
            stack.append((li, wanted, True))
            for bi in reversed(layer.bottoms):
                if not available(bi):
                    stack.append((blobs[bi].producer, bi, False))
        return order
