"""An LLM decoder whose KV cache stays on the device between steps (an addition to ncnn's API).

    dec = Decoder(net)                                  # ncnn's decoder form, on the GPU path
    hidden = dec.step(embeddings, mask, cos, sin)       # (new, hidden); the cache grows in place
    dec.length, dec.capacity                            # tokens cached, rows the buffers hold
    dec.truncate(n)                                     # keep only the first n tokens

The pyncnn way (mat_cache_step.py) feeds the caches as Mats and takes them back as Mats: on
the GPU path the whole cache crosses to the device and back at every step. A Decoder owns
the caches as device buffers instead (gpu/kv_cache.py) and feeds them to the decoder's
cache_k<i>/cache_v<i> inputs as VkMats; each SDPA layer writes the step's keys and values
in place and attends over the buffers' whole capacity, with the mask padded by MASKED past
the tokens cached. Per step the host sends the embeddings, the mask, the RoPE tables and a
4-byte write position, and gets out0 back; nothing of the cache crosses.

The buffers hold `headroom` rows more than needed when made or grown (and grow by half at
least), so a one-token step keeps the same input shapes, (1, capacity) for the mask, for
many steps: the net replays one recorded plan for them. Growing copies the rows into
larger buffers on the device, and the next step records a plan for the new capacity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..array_checks import is_int
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..mat import Mat
from ..mat_intake import float32_copy
from ..memory_budget import check_alloc
from .decoder_inputs import MASKED
from .mat_cache_step import DECODER_INPUTS, DECODER_OUTPUT, cache_blob_names

if TYPE_CHECKING:
    from ..net import Net

ROW_ALIGN = 4  # capacities are multiples of 4 rows: the attention shaders work on 4 x 4 blocks


def device_cache_problem(net: Net) -> str | None:
    """Why `net` cannot keep its KV cache on the device (None: it can).

    It must be a vkncnn Net on the GPU path whose every cache input is read by one SDPA
    layer with a KV cache and an attention mask (5=1, 7=1) that runs on the device."""
    if not callable(getattr(net, "input_names", None)) or not hasattr(net, "graph") or not hasattr(net, "gpu"):
        return f"a device KV cache needs a vkncnn Net, got {type(net).__name__}"
    if net.gpu is None or not net.opt.use_vulkan_compute:
        return "the net is not on the GPU path (opt.use_vulkan_compute and a Vulkan device)"
    names = cache_blob_names(net)
    graph = net.graph
    for name in names:
        consumers = graph.blobs[net.find_blob_index_by_name(name)].consumers
        layer = graph.layers[consumers[0]] if len(consumers) == 1 else None
        if layer is None or layer.type != "SDPA" or not (layer.kv_cache and layer.attn_mask):
            return f"{name} is not read by exactly one SDPA layer with a KV cache and a mask (5=1 7=1)"
        if not net.gpu.gpu_layer(layer):
            return f"SDPA layer {layer.name!r}, which reads {name}, runs on the CPU"
    return None


class Decoder:
    """A decoder net with its KV caches on the device: one sequence, grown step by step."""

    def __init__(self, net: Net, *, capacity: int | None = None, headroom: int = 128, head: Net | None = None) -> None:
        """capacity: rows to make room for at first (default: headroom); headroom: rows added
        beyond what a step needs whenever the buffers grow; head: a net from the last token's
        hidden state (in0) to what step_head() returns (out0: a proj_out's logits), on the
        same device."""
        problem = device_cache_problem(net)
        if problem is not None:
            raise ArgumentError(f"Decoder: {problem}; feed the caches as Mats instead (vkncnn.llm.decoder_step)")
        if head is not None:
            problem = head_problem(net, head)
            if problem is not None:
                raise ArgumentError(f"Decoder: head: {problem}")
        if not is_int(headroom) or headroom < 0:
            raise ArgumentError(f"headroom: expected an int >= 0 (rows), got {headroom!r:.40}")
        if capacity is not None and (not is_int(capacity) or capacity < 1):
            raise ArgumentError(f"capacity: expected an int >= 1 (rows) or None, got {capacity!r:.40}")
        from ..gpu.kv_cache import DeviceKvCache  # lazy: the GPU runtime, loaded once a net asked for it

        self.net = net
        self.headroom = int(headroom)
        self.cache_names = cache_blob_names(net)
        first = capacity if capacity is not None else max(self.headroom, 1)
        # the step each row was written by, on the host: the device buffers answer to the
        # budget when the first step sizes them
        check_alloc(net.opt, _round_up(first), 8, "Decoder: the record of its cache rows")
        self._cache = DeviceKvCache(net.gpu.vkdev, self.cache_names, _round_up(first))
        self.length = 0
        self.released = False
        self.serial = 0  # steps run; each row remembers the step that wrote it (restore() checks)
        self._written = np.zeros(self._cache.capacity, np.int64)
        self._dirty = 0  # rows below this may hold values (the rest are zeros)
        from ..gpu.held_plan import HeldPlan  # lazy: as DeviceKvCache

        index = net.find_blob_index_by_name
        self._host_inputs = [index(name) for name in DECODER_INPUTS]
        self._device_inputs = {index(name): mat for name, mat in zip(self.cache_names, self._cache.mats)}
        # one plan per (tokens, capacity), replayed step after step without an extractor
        self._output = index(DECODER_OUTPUT)
        self._plan = HeldPlan(net, self._output)
        self.head = head
        if head is not None:  # its plan reads out0 where the decoder's plan leaves it
            self._head_input = head.find_blob_index_by_name(HEAD_INPUT)
            self._head_plan = HeldPlan(head, head.find_blob_index_by_name(HEAD_OUTPUT))

    @property
    def capacity(self) -> int:
        """Rows per head the device buffers hold (tokens that fit before they grow)."""
        return self._cache.capacity

    def step(self, embeddings: np.ndarray, mask: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        """Run `new` tokens after the `length` cached: embeddings (new, hidden), the additive mask
        (new, length + new), RoPE cos/sin (new, half head dim). Returns out0, (new, hidden)."""
        key, host = self._begin(embeddings, mask, cos, sin)
        out = self._plan.run(key, host, self._device_inputs)
        self.length += key[0]
        return np.ascontiguousarray(out, np.float32)  # each replay downloads into a new array: no copy

    def step_head(self, embeddings: np.ndarray, mask: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        """step(), then the head (Decoder(head=...)) on the last token's hidden state: returns the
        head's out0 (a proj_out's logits). In a one-token step the head reads the hidden state
        where the decoder's plan left it, and both plans run as one submission to the GPU:
        one wait a step, no upload of the hidden state."""
        if self.head is None:
            raise ArgumentError("step_head(): this Decoder has no head (Decoder(net, head=proj_out_net))")
        from ..gpu.held_plan import replay_if_ready  # lazy: the GPU runtime, as in __init__

        key, host = self._begin(embeddings, mask, cos, sin)
        new = key[0]
        if new == 1 and replay_if_ready([(self._plan, key, host), (self._head_plan, self._plan.serial, {})]):
            self.length += new
            return np.ascontiguousarray(self._head_plan.output(), np.float32)
        hidden = self._plan.run(key, host, self._device_inputs)
        self.length += new
        on_device = self._plan.blob(self._output)  # None where out0 comes from a layer on the CPU
        if new == 1 and on_device is not None:  # the head reads the hidden state where the decoder left it
            return np.ascontiguousarray(self._head_plan.run(self._plan.serial, {}, {self._head_input: on_device}),
                                        np.float32)
        with self.head.create_extractor() as ex:  # a prefill (once a sequence): its last row, uploaded
            ex.input(HEAD_INPUT, Mat(np.array(hidden[-1:], np.float32)))
            return ex.extract(HEAD_OUTPUT)[1].numpy()

    def _begin(self, embeddings, mask, cos, sin) -> tuple[tuple[int, int], dict]:
        """Check a step's inputs and ready the cache for it: the plan key (new tokens,
        capacity) and the host inputs by blob index."""
        self._check_held("Decoder.step")
        # copies: the plan's uploads read them, and nothing of the caller's may be touched
        embeddings, mask, cos, sin = (float32_copy(a, f"Decoder.step: {what}") for a, what in
                                      ((embeddings, "embeddings"), (mask, "mask"), (cos, "cos"), (sin, "sin")))
        if embeddings.ndim != 2 or not len(embeddings):
            raise ShapeError(f"Decoder.step: expected embeddings (new, hidden), got {embeddings.shape}")
        new, past = len(embeddings), self.length
        total = past + new
        if mask.shape != (new, total):
            raise ShapeError(f"Decoder.step: expected a mask of ({new}, {total}) for {new} tokens after {past}, "
                             f"got {mask.shape}")
        if total > self.capacity:
            self._grow(total)
        if self._dirty > total:  # after a truncate: rows past this step's are masked, but must be finite
            self._cache.zero_rows(total, self._dirty)  # (row total - 1, which may be touched, is this step's)
        self._dirty = total
        padded = np.full((new, self.capacity), MASKED, np.float32)
        padded[:, :total] = mask
        self._cache.set_position(past)
        self.serial += 1
        self._written[past:total] = self.serial  # marked first: a step that fails may have written them
        return (new, self.capacity), dict(zip(self._host_inputs, (embeddings, padded, cos, sin)))

    def truncate(self, length: int) -> None:
        """Keep the first `length` tokens: the next step writes after them (0: a new sequence)."""
        if not is_int(length) or not 0 <= length <= self.length:
            raise ArgumentError(f"truncate(): expected 0..{self.length} tokens, got {length!r:.40}")
        self.length = int(length)

    def restore(self, length: int, serial: int) -> None:
        """Go back to the state after step `serial`, when `length` tokens were cached; fails if a
        later step has rewritten any of those rows (that state is gone)."""
        if length > self.capacity or (length and self._written[:length].max() > serial):
            raise ArgumentError(f"this KV cache state ({length} tokens, after step {serial}) is gone: later "
                                f"steps rewrote its rows (the cache now holds {self.length} tokens)")
        self.length = length

    def caches(self) -> list[np.ndarray]:
        """Every cache blob's rows, (heads, length, width) each in cache_names order: downloads,
        for looking at the cache (a step needs none of them)."""
        self._check_held("Decoder.caches")
        return [self._cache.read(i, self.length) for i in range(len(self.cache_names))]

    def release(self) -> None:
        """Give the device buffers back now (otherwise when the Decoder is collected); the
        Decoder steps no more."""
        self.released = True
        self._plan.release()
        if self.head is not None:
            self._head_plan.release()
        self._cache.release()

    def _check_held(self, what: str) -> None:
        if self.released:
            raise ArgumentError(f"{what}: this Decoder was released (its device buffers are gone); make a new one")

    def _grow(self, needed: int) -> None:
        capacity = _round_up(max(needed + self.headroom, self.capacity + self.capacity // 2))
        self._cache.grow(capacity)
        self._written = np.concatenate([self._written, np.zeros(capacity - len(self._written), np.int64)])

    def __repr__(self) -> str:
        return f"<Decoder {len(self.cache_names)} caches, {self.length} of {self.capacity} rows>"


HEAD_INPUT, HEAD_OUTPUT = "in0", "out0"  # a proj_out's blobs, as ncnn's LLM exports name them


def head_problem(net: Net, head: Net) -> str | None:
    """Why `head` cannot follow the decoder `net` on the device (None: it can)."""
    if not callable(getattr(head, "input_names", None)) or not hasattr(head, "gpu"):
        return f"expected a vkncnn Net, got {type(head).__name__}"
    if head.gpu is None or not head.opt.use_vulkan_compute:
        return "the net is not on the GPU path (opt.use_vulkan_compute and a Vulkan device)"
    if head.gpu.vkdev is not net.gpu.vkdev:
        return "it runs on another Vulkan device than the decoder"
    if head.input_names() != [HEAD_INPUT] or HEAD_OUTPUT not in head.output_names():
        return (f"expected one input {HEAD_INPUT!r} and an output {HEAD_OUTPUT!r} (proj_out's form), got inputs "
                f"{head.input_names()} and outputs {head.output_names()}")
    return None


def _round_up(rows: int) -> int:
    return -(-rows // ROW_ALIGN) * ROW_ALIGN


@dataclass(frozen=True)
class DeviceCache:
    """A Generator's KV cache on the device: its Decoder and the state this cache stands for."""

    decoder: Decoder
    length: int = 0
    serial: int = 0

    def restart(self) -> DeviceCache:
        """An empty cache on the same device buffers."""
        return DeviceCache(self.decoder, 0, self.decoder.serial)


def device_step(decoder: Net, names: list[str], embeddings: np.ndarray, mask: np.ndarray, cos: np.ndarray,
                sin: np.ndarray, cache: DeviceCache,
                mat_type: Callable[..., Any] = Mat) -> tuple[np.ndarray, DeviceCache]:
    """decoder_step's twin with the cache on the device: (hidden state of the last token (1, hidden),
    the grown cache). `cache` comes from Generator.new_cache() or an earlier step."""
    dec = _own_decoder(decoder, cache, "device_step")
    dec.restore(cache.length, cache.serial)
    hidden = dec.step(embeddings, mask, cos, sin)
    return hidden[-1:], DeviceCache(dec, dec.length, dec.serial)


def device_head_step(decoder: Net, embeddings: np.ndarray, mask: np.ndarray, cos: np.ndarray, sin: np.ndarray,
                     cache: DeviceCache) -> tuple[np.ndarray, DeviceCache]:
    """device_step with the cache's Decoder's head after it: (the head's out0 for the last token
    (a proj_out's logits), the grown cache)."""
    dec = _own_decoder(decoder, cache, "device_head_step")
    dec.restore(cache.length, cache.serial)
    out = dec.step_head(embeddings, mask, cos, sin)
    return out, DeviceCache(dec, dec.length, dec.serial)


def _own_decoder(decoder: Net, cache: DeviceCache, where: str) -> Decoder:
    if not isinstance(cache, DeviceCache):
        raise ArgumentTypeError(f"{where}: expected a DeviceCache (Generator.new_cache()), got {type(cache).__name__}")
    if cache.decoder.net is not decoder:
        raise ArgumentError(f"{where}: this DeviceCache belongs to another decoder net")
    return cache.decoder
