"""Extractor: feeds inputs and computes requested blobs, only what they need.

Evaluation is lazy and demand-driven as in ncnn: extracting a blob runs its
producer, whose missing inputs run their producers, and so on back to the net's
inputs. The walk is iterative, so a 1000-layer decoder never hits Python's
recursion limit. In light mode a blob is dropped once every layer that consumes
it has run; extracting it later recomputes it.
"""

from __future__ import annotations

import numpy as np

from .blas_threads import set_blas_threads, update_load_cap
from .errors import BlobNotFoundError, Error, LayerError
from .mat import Mat


class Extractor:
    def __init__(self, net) -> None:
        self.net = net
        self.opt = net.opt.copy()
        self._blobs: dict[int, np.ndarray] = {}
        self._pending_consumers: dict[int, int] = {}
        self._gpu = None  # per-extractor GPU state, made on first GPU extract

    # -- context manager and options ------------------------------------------------------
    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc) -> None:
        self.clear()

    def clear(self) -> None:
        self._blobs.clear()
        self._pending_consumers.clear()
        if self._gpu is not None:
            self._gpu.release()
            self._gpu = None

    def __del__(self) -> None:
        # an extractor dropped without clear() still hands its GPU plans back to the net
        try:
            self.clear()
        except Exception:
            pass

    def set_light_mode(self, enable: bool) -> None:
        self.opt.lightmode = bool(enable)

    def set_num_threads(self, n: int) -> None:
        self.opt.num_threads = int(n)

    def set_blob_allocator(self, allocator) -> None:
        self.opt.blob_allocator = allocator

    def set_workspace_allocator(self, allocator) -> None:
        self.opt.workspace_allocator = allocator

    def set_blob_vkallocator(self, allocator) -> None:
        self.opt.blob_vkallocator = allocator

    def set_workspace_vkallocator(self, allocator) -> None:
        self.opt.workspace_vkallocator = allocator

    def set_staging_vkallocator(self, allocator) -> None:
        self.opt.staging_vkallocator = allocator

    # -- blobs by name or index -----------------------------------------------------------
    def _resolve(self, blob) -> int:
        blobs = self.net._blobs
        if isinstance(blob, (int, np.integer)) and not isinstance(blob, bool):
            if not 0 <= int(blob) < len(blobs):
                raise BlobNotFoundError(f"blob index {blob} out of range 0..{len(blobs) - 1}")
            return int(blob)
        index = self.net.find_blob_index_by_name(str(blob))
        if index < 0:
            shown = ", ".join(repr(n) for n in (self.net.input_names() + self.net.output_names())[:12])
            raise BlobNotFoundError(f"no blob named {blob!r} in {self.net._source} "
                                    f"(inputs and outputs: {shown})")
        return index

    def input(self, blob, mat) -> int:
        """Feed a Mat (or any array-like, converted as Mat() does) to a blob."""
        index = self._resolve(blob)
        if not isinstance(mat, Mat):
            mat = Mat(mat)
        data = mat.numpy()  # an empty Mat is allowed, as in ncnn (e.g. a first, empty KV cache)
        if data.dtype != np.float32:
            data = data.astype(np.float32)
        self._blobs[index] = data
        if self._gpu is not None:
            self._gpu.forget(index)
        return 0

    def extract(self, blob, *args, type: int = 0):
        """(0, Mat) for a blob; `extract(name, mat)` fills `mat` and returns 0, as pyncnn.

        `type` is accepted for pyncnn compatibility: every blob comes back as fp32 with
        elempack 1 (ncnn's type=0); there is no raw packed layout to hand out.
        """
        out_mat = None
        if args and isinstance(args[0], Mat):
            out_mat = args[0]
            args = args[1:]
        if len(args) > 1 or type not in (0, 1) or (args and int(args[0]) not in (0, 1)):
            raise Error(f"extract(): unexpected arguments {args!r}, type={type!r} (type is 0 or 1)")
        index = self._resolve(blob)
        self.net._prepare()
        if self._use_gpu():
            data = self._gpu_state().extract(index)
        else:
            data = self._forward_cpu(index)
        # C order: kernels may leave a blob channels-last in memory (vkncnn/channels_last.py)
        result = Mat.from_array(np.array(data, dtype=np.float32, copy=True, order="C"))
        if out_mat is not None:
            out_mat._set(result._data, result.dims)
            return 0
        return 0, result

    # -- the numpy path -----------------------------------------------------------------------
    def _use_gpu(self) -> bool:
        return self.net.gpu is not None and self.opt.use_vulkan_compute

    def _gpu_state(self):
        if self._gpu is None:
            self._gpu = self.net.gpu.new_extractor_state(self)
        return self._gpu

    def _missing_input(self, index: int) -> Error:
        name = self.net._blobs[index].name
        return Error(f"blob {name!r} is a net input but was not given: call input({name!r}, mat) first")

    def _forward_cpu(self, target: int) -> np.ndarray:
        """Run, in dependency order, every layer the target blob needs and does not have yet."""
        update_load_cap()  # fewer threads while other processes keep CPUs busy
        set_blas_threads(self.opt.num_threads)
        for li in self._schedule(target):
            self._run_layer_cpu(li)
        return self._blobs[target]

    def _schedule(self, target: int, available=None) -> list[int]:
        """Producers to run, dependencies first: an iterative post-order walk.

        `available(blob)` says whether a blob exists already (default: on the host).
        """
        net = self.net
        have = available or (lambda bi: bi in self._blobs)
        order: list[int] = []
        visited: set[int] = set()
        if have(target):
            return order
        stack: list[tuple[int, int, bool]] = [(net._blobs[target].producer, target, False)]
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
            layer = net._layers[li]
            if layer.type == "Input" and not layer.bottoms:
                raise self._missing_input(wanted)
            stack.append((li, wanted, True))
            for bi in reversed(layer.bottoms):
                if not have(bi):
                    stack.append((net._blobs[bi].producer, bi, False))
        return order

    def _run_layer_cpu(self, li: int) -> None:
        net = self.net
        layer = net._layers[li]
        bottoms = [self._blobs[bi] for bi in layer.bottoms]
        try:
            tops = layer.forward_cpu(bottoms, self.opt)
        except Error as e:
            raise type(e)(f"layer {layer.name!r} ({layer.type}): {e}") from None
        except Exception as e:
            raise LayerError(f"layer {layer.name!r} ({layer.type}) failed on inputs "
                             f"{[tuple(b.shape) for b in bottoms]}: {type(e).__name__}: {e}") from e
        if len(tops) != len(layer.tops):
            raise LayerError(f"layer {layer.name!r} ({layer.type}) returned {len(tops)} blobs, "
                             f"expected {len(layer.tops)}")
        for bi, data in zip(layer.tops, tops):
            self._blobs[bi] = data
        if self.opt.lightmode:
            self._release_consumed(li)

    def _release_consumed(self, li: int) -> None:
        """Light mode: drop a bottom once every consumer of it has run in this extractor."""
        net = self.net
        for bi in net._layers[li].bottoms:
            if net._blobs[bi].producer < 0 or net._layers[net._blobs[bi].producer].type == "Input":
                continue  # inputs stay: the user gave them, later extracts may need them
            left = self._pending_consumers.get(bi, len(net._blobs[bi].consumers)) - 1
            self._pending_consumers[bi] = left
            if left <= 0:
                self._blobs.pop(bi, None)
                self._pending_consumers.pop(bi, None)
