"""Extractor: feeds inputs and computes requested blobs, only what they need.

Evaluation is lazy and demand-driven as in ncnn: extracting a blob runs its
producer, whose missing inputs run their producers, and so on back to the net's
inputs. The walk is iterative, so a 1000-layer decoder never hits Python's
recursion limit. In light mode a blob is dropped once every layer that consumes
it has run; extracting it later recomputes it.

An extractor computes each blob once. input() after extract() replaces that input for
what is computed from then on; blobs computed already (the extracted ones among them)
keep the values they had, on both paths, as in ncnn: use a new extractor for new inputs.

Lifetime: nothing of the GPU path refers back to the extractor, so a dropped extractor is
freed by reference counting where it is dropped; its finalizer only queues the return of
its GPU plans to the net (vkncnn/gpu/vulkan/lifetime.py says why finalizers take no locks).
clear(), `with` and plain dropping all hand the plans back, each exactly once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .argcheck import check_extract, check_input
from .batch_forward import forward_batched, item, stack_items
from .blas_threads import set_blas_threads, update_load_cap
from .errors import ArgumentError, ArgumentTypeError, BlobNotFoundError, Error, LayerError
from .layer import layer_failure
from .log import logger
from .mat import Mat, input_values

if TYPE_CHECKING:  # for annotations only: the net imports this module, the GPU loads lazily
    from .allocators import Allocator
    from .gpu.vulkan.allocator import VkAllocator
    from .gpu.vulkan.vkmat import VkMat
    from .net import Net
    from .option import Option


def _is_vkmat(value) -> bool:
    """A VkMat, without importing the GPU runtime (no VkMat exists before it is loaded)."""
    vkmat = sys.modules.get("vkncnn.gpu.vulkan.vkmat")
    return vkmat is not None and isinstance(value, vkmat.VkMat)


def run_deferred_releases() -> None:
    """Run the GPU releases that finalizers queued (a safe point: no vkncnn lock is held)."""
    lifetime = sys.modules.get("vkncnn.gpu.vulkan.lifetime")  # never started without the GPU path
    if lifetime is not None:
        lifetime.run_deferred()


def defer_gpu_release(release: Callable[..., object], *args: object) -> None:
    """From a finalizer: queue a GPU release for the next safe point (no import, no lock)."""
    try:
        lifetime = sys.modules.get("vkncnn.gpu.vulkan.lifetime")
        if lifetime is not None:
            lifetime.defer(release, *args)
    except Exception:  # the interpreter is tearing modules down: the OS reclaims everything
        pass


class Extractor:
    def __init__(self, net: Net | None = None) -> None:
        if net is None:
            raise ArgumentTypeError("Extractor: No constructor defined for scripts; an Extractor comes from "
                                    "net.create_extractor()")
        self.net = net
        self._opt = net.opt.copy()
        self._blobs: dict[int, np.ndarray] = {}
        self._batch: dict[int, int] = {}  # n of the blobs that hold a batch (vkncnn/batch_forward.py)
        self._items: list[Extractor] | None = None  # one extractor per item of a batch, made on demand
        self._pending_consumers: dict[int, int] = {}
        self._gpu = None  # per-extractor GPU state, made on first GPU extract
        self._layer_observer: Callable | None = None

    @property
    def opt(self) -> Option:
        return self._opt

    @opt.setter
    def opt(self, opt: Option) -> None:
        self._opt = opt
        if self._gpu is not None:
            self._gpu.opt = opt

    # -- context manager and options ------------------------------------------------------
    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc) -> None:
        self.clear()

    def clear(self) -> None:
        run_deferred_releases()
        self._blobs.clear()
        self._batch.clear()
        self._drop_items()
        self._pending_consumers.clear()
        state, self._gpu = self._gpu, None
        if state is not None:
            state.release()

    def __del__(self) -> None:
        # dropped without clear(): the plans go back to the net at the next safe point
        state = getattr(self, "_gpu", None)
        if state is not None:
            defer_gpu_release(state.release)

    def set_layer_observer(self, observer: Callable | None) -> None:
        """numpy path: call `observer(layer, start, end)` after each layer's forward_cpu, with
        time.perf_counter() seconds taken around it; None (the default) turns it off. Beyond
        ncnn's API: `vkncnn profile` times layers with it. The GPU path times its layers with
        device timestamps instead (NetGpu.profile)."""
        if observer is not None and not callable(observer):
            raise Error(f"set_layer_observer(): expected a callable or None, got {type(observer).__name__}")
        self._layer_observer = observer

    def set_light_mode(self, enable: bool) -> None:
        self.opt.lightmode = bool(enable)

    def set_num_threads(self, n: int) -> None:
        self.opt.num_threads = int(n)

    def set_blob_allocator(self, allocator: Allocator | None) -> None:
        self.opt.blob_allocator = allocator

    def set_workspace_allocator(self, allocator: Allocator | None) -> None:
        self.opt.workspace_allocator = allocator

    def set_blob_vkallocator(self, allocator: VkAllocator | None) -> None:
        self.opt.blob_vkallocator = allocator

    def set_workspace_vkallocator(self, allocator: VkAllocator | None) -> None:
        self.opt.workspace_vkallocator = allocator

    def set_staging_vkallocator(self, allocator: VkAllocator | None) -> None:
        self.opt.staging_vkallocator = allocator

    def set_kvcache_allocator(self, allocator: Allocator | None) -> None:
        self.opt.kvcache_allocator = allocator

    def set_kvcache_max_seqlen_hint(self, max_seqlen_hint: int) -> None:
        self.opt.kvcache_max_seqlen_hint = max_seqlen_hint

    # -- blobs by name or index -----------------------------------------------------------
    def _resolve(self, blob) -> int:
        blobs = self.net.graph.blobs
        if isinstance(blob, (int, np.integer)) and not isinstance(blob, bool):
            if not 0 <= int(blob) < len(blobs):
                raise BlobNotFoundError(f"blob index {blob} out of range 0..{len(blobs) - 1}")
            return int(blob)
        index = self.net.find_blob_index_by_name(str(blob))
        if index < 0:
            shown = ", ".join(repr(n) for n in (self.net.input_names() + self.net.output_names())[:12])
            raise BlobNotFoundError(f"no blob named {blob!r} in {self.net.graph.source} "
                                    f"(inputs and outputs: {shown})")
        return index

    def input(self, blob: str | int, mat: Mat | VkMat | npt.ArrayLike) -> int:
        """Feed a Mat (or any array-like, converted as Mat() does) to a blob.

        Beyond pyncnn: on the GPU path a VkMat on the net's device (such as a KV cache kept
        there, vkncnn.llm.Decoder) is read where it is, without an upload.
        """
        check_input(blob, mat)
        index = self._resolve(blob)
        if _is_vkmat(mat):
            return self._input_device(index, mat)
        if not isinstance(mat, Mat):
            mat = Mat(mat)
        # an empty Mat is allowed, as in ncnn (e.g. a first, empty KV cache)
        data, n = input_values(mat)
        self._blobs[index] = data
        self._set_batch(index, n)
        if self._gpu is not None:
            self._gpu.forget(index)
        if self._items is not None and n in (1, len(self._items)):
            # the items computed so far keep their values; what they compute next sees this input
            for b, twin in enumerate(self._items):
                twin._blobs[index] = item(data, n, b)
                if twin._gpu is not None:
                    twin._gpu.forget(index)
        else:  # another batch size: items are made afresh from the blobs held
            self._drop_items()
        return 0

    def _input_device(self, index: int, vkmat) -> int:
        name = self.net.graph.blobs[index].name
        if not self._use_gpu():
            raise ArgumentTypeError(f"input({name!r}): a VkMat (device tensor) needs the net on the GPU path "
                                    "(opt.use_vulkan_compute and a Vulkan device); give a Mat")
        if vkmat.allocator is not None and getattr(vkmat.allocator, "vkdev", None) is not self.net.gpu.vkdev:
            raise ArgumentError(f"input({name!r}): the VkMat lives on another Vulkan device than the net's")
        self._drop_items()
        self._blobs.pop(index, None)
        self._set_batch(index, 1)
        self._gpu_state().input_device(index, vkmat)
        return 0

    def _drop_items(self) -> None:
        """Forget the per-item extractors of a batch (and what they computed)."""
        items, self._items = self._items, None
        for twin in items or ():
            twin.clear()

    def extract(self, blob: str | int, *args: Mat | int, type: int = 0) -> tuple[int, Mat] | int:
        """(0, Mat) for a blob; `extract(name, mat)` fills `mat` and returns 0, as pyncnn.

        `type` is accepted for pyncnn compatibility: every blob comes back as fp32 with
        elempack 1 (ncnn's type=0); there is no raw packed layout to hand out.
        """
        check_extract(blob, args, type)
        out_mat = None
        if args and isinstance(args[0], Mat):
            out_mat = args[0]
            args = args[1:]
        if len(args) > 1 or type not in (0, 1) or (args and int(args[0]) not in (0, 1)):
            raise Error(f"extract(): unexpected arguments {args!r}, type={type!r} (type is 0 or 1)")
        index = self._resolve(blob)
        run_deferred_releases()
        self.net._prepare()
        data = self._blobs.get(index)
        if data is None:  # computed once per extractor, whichever path computes it
            data = self._compute(index)
            # C order: kernels may leave a blob channels-last in memory (vkncnn/channels_last.py);
            # a copy: the GPU path's download buffer is the plan's, refilled at its next replay
            data = self._blobs[index] = np.array(data, dtype=np.float32, copy=True, order="C")
        n = self._batch.get(index, 1)
        result = Mat.from_array(data.copy(), n=n)
        if out_mat is not None:
            out_mat._set(result._data, result.dims, n=n)
            return 0
        return 0, result

    def _set_batch(self, index: int, n: int) -> None:
        if n > 1:
            self._batch[index] = n
        else:
            self._batch.pop(index, None)

    # -- the numpy path -----------------------------------------------------------------------
    def _use_gpu(self) -> bool:
        return self.net.gpu is not None and self.opt.use_vulkan_compute

    def _compute(self, index: int) -> np.ndarray:
        """The blob's values, on the path the options and the net choose."""
        n = max(self._batch.values(), default=1)
        if n > 1 and not self.net.graph.has_batch_layers():
            if self._use_gpu() and self._items is None:
                data = self._gpu_state().extract_batch(index, n)  # None: not as one plan
                if data is not None:
                    self._batch[index] = n
                    return data
            return self._extract_items(index, n)
        if n > 1 and self._use_gpu():
            # a layer that moves the batch between axes (Reshape 12=/13=) needs every item at
            # once; item-by-item GPU plans cannot hold that, the numpy path can
            logger.info("a batch of %d through %s, whose layers reshape across the batch axis, runs on "
                        "the numpy path", n, self.net.graph.source)
        if n == 1 and self._use_gpu():
            return self._gpu_state().extract(index)
        return self._forward_cpu(index)

    def _extract_items(self, index: int, n: int) -> np.ndarray:
        """A batch through a net whose layers all work item by item: each item runs as if
        extracted alone (one extractor per item, kept, so later extracts reuse what the items
        computed; on the GPU each item replays the same recorded plan), the results stacked."""
        if self._items is None:
            self._items = []
            for b in range(n):
                twin = Extractor(self.net)
                twin._opt = self._opt
                twin._blobs.update({bi: item(data, self._batch.get(bi, 1), b) for bi, data in self._blobs.items()})
                self._items.append(twin)
        outputs = []
        for twin in self._items:
            # a copy: on the GPU the array is the plan's download buffer, refilled when the next
            # item replays the plan; handing the plan back at once lets every item replay one plan
            outputs.append(np.array(twin._compute(index), dtype=np.float32, copy=True))
            state, twin._gpu = twin._gpu, None
            if state is not None:
                state.release()
        self._batch[index] = n
        return stack_items(f"blob {self.net.graph.blobs[index].name!r}", outputs)

    def _gpu_state(self):
        if self._gpu is None:
            self._gpu = self.net.gpu.new_extractor_state(self._blobs, self._batch, self._opt)
        return self._gpu

    def _forward_cpu(self, target: int) -> np.ndarray:
        """Run, in dependency order, every layer the target blob needs and does not have yet."""
        update_load_cap()  # fewer threads while other processes keep CPUs busy
        set_blas_threads(self.opt.num_threads)
        for li in self._schedule(target):
            self._run_layer_cpu(li)
        return self._blobs[target]

    def _schedule(self, target: int) -> list[int]:
        return self.net.graph.schedule(target, available=lambda bi: bi in self._blobs)

    def _run_layer_cpu(self, li: int) -> None:
        layer = self.net.graph.layers[li]
        bottoms = [self._blobs[bi] for bi in layer.bottoms]
        sizes = [self._batch.get(bi, 1) for bi in layer.bottoms]
        top_sizes = [1] * len(layer.tops)
        observer = self._layer_observer  # off: one attribute read per layer, no clock
        start = time.perf_counter() if observer is not None else 0.0
        try:
            if max(sizes, default=1) == 1 and not getattr(layer, "support_batch", False):
                tops = layer.forward_cpu(bottoms, self.opt)
            else:
                tops, top_sizes = forward_batched(layer, bottoms, sizes, self.opt)
        except Exception as e:
            raise layer_failure(layer, e, f"on inputs {[tuple(b.shape) for b in bottoms]}") from e
        if observer is not None:
            observer(layer, start, time.perf_counter())
        if len(tops) != len(layer.tops):
            raise LayerError(f"layer {layer.name!r} ({layer.type}) returned {len(tops)} blobs, "
                             f"expected {len(layer.tops)}")
        for bi, data, n in zip(layer.tops, tops, top_sizes):
            self._blobs[bi] = data
            self._set_batch(bi, n)
        if self.opt.lightmode:
            self._release_consumed(li)

    def _release_consumed(self, li: int) -> None:
        """Light mode: drop a bottom once every consumer of it has run in this extractor."""
        graph = self.net.graph
        for bi in graph.layers[li].bottoms:
            if graph.is_input(bi):
                continue  # inputs stay: the user gave them, later extracts may need them
            left = self._pending_consumers.get(bi, len(graph.blobs[bi].consumers)) - 1
            self._pending_consumers[bi] = left
            if left <= 0:
                self._blobs.pop(bi, None)
                self._batch.pop(bi, None)
                self._pending_consumers.pop(bi, None)
