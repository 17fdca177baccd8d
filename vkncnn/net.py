"""Net: a loaded model, its layers and blobs, and the device it runs on.

Loading builds the graph from a parsed .param (text or binary), checks it (every
blob produced once, consumed only after it is produced, counts as declared), then
reads weights layer by layer. Running happens in an Extractor.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from .channels_last import plan_channels_last
from .device_api import get_gpu_device
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    Error,
    GraphError,
    LayerError,
    ParamError,
    UnknownLayerError,
    WeightError,
)
from .extractor import Extractor, defer_gpu_release, run_deferred_releases
from .format.datareader import (
    DataReader,
    DataReaderFromEmpty,
    DataReaderFromMemory,
    FileLimit,
    opened_reader,
    read_exactly,
)
from .format.graph_spec import GraphSpec, LayerSpec
from .format.modelbin import ModelBin, ModelBinFromDataReader
from .format.param_bin import HEADER_BYTES, check_header, parse_param_bin
from .format.param_text import parse_param_reader, parse_param_text
from .graph import Blob, Graph
from .layer import Layer, create_layer
from .layer_types import CUSTOM_BIT, LAYER_TYPE_NAMES, layer_to_index
from .log import warn_once
from .mat import Mat
from .option import Option

# A .param text file this large is not a model; refusing it bounds memory use.
if TYPE_CHECKING:  # the Vulkan runtime loads lazily, when a net binds to a device
    from .gpu.vulkan.device import VulkanDevice

# where a .param or .bin comes from: a path, a binary file object, or a DataReader
Source = str | os.PathLike | BinaryIO | DataReader

MAX_PARAM_BYTES = 256 << 20
_PARAM_FILE = FileLimit(".param", MAX_PARAM_BYTES, ParamError)
_PARAM_BIN_FILE = FileLimit(".param.bin", MAX_PARAM_BYTES, ParamError)
_MAX_TYPE_NAME = 255  # the longest layer type a .param may name


class _NoWeights(ModelBin):
    """Stands in when load_model was never called: any weight request is an error."""

    def __init__(self) -> None:
        self.layer_name = None

    def load_flat(self, n: int, type_: int) -> np.ndarray:
        raise WeightError(f"layer {self.layer_name!r} needs weights but load_model() was not called")


class Net:
    def __init__(self) -> None:
        self.opt = Option()
        self._custom: dict[str, tuple] = {}
        self._vkdev_index: int | None = None
        self._vulkan_at_load = False  # opt.use_vulkan_compute when load_param ran
        self._lock = threading.Lock()
        self._reset_graph()

    def _reset_graph(self) -> None:
        self.graph = Graph()
        self._layer_specs: list[LayerSpec] = []
        self._model_loaded = False
        self._pipelines_ready = False
        self.gpu = None  # a vkncnn.gpu.planner.NetGpu once the GPU path is bound

    # -- context manager, as pyncnn ----------------------------------------------
    def __enter__(self) -> Net:
        return self

    def __exit__(self, *exc) -> None:
        self.clear()

    # -- custom layers ------------------------------------------------------------
    def register_custom_layer(self, type_or_index: str | int, creator: Callable[..., Any],
                              destroyer: Callable[..., Any] | None = None, userdata: Any = None) -> int:
        """Make `type` in a .param create `creator()`; must come before load_param."""
        if isinstance(type_or_index, bool) or not isinstance(type_or_index, (int, np.integer, str)):
            raise ArgumentTypeError(f"register_custom_layer(): expected a layer type name (str) or ncnn "
                                    f"type index (int), got {type(type_or_index).__name__}")
        if isinstance(type_or_index, str):
            key = type_or_index
            # the name must be one token of a .param line to ever be looked up
            if not key or len(key) > _MAX_TYPE_NAME or any(ch.isspace() for ch in key):
                raise ArgumentError(f"register_custom_layer(): a layer type name is 1-{_MAX_TYPE_NAME} "
                                    f"characters without whitespace, got {key[:40]!r}")
        else:
            index = int(type_or_index)
            if not 0 <= index < 1 << 31:
                raise ArgumentError(f"register_custom_layer(): type index must be in 0..2^31-1, got {index}")
            if index & CUSTOM_BIT:
                key = f"custom{index & ~CUSTOM_BIT}"
            else:
                if index >= len(LAYER_TYPE_NAMES):
                    raise UnknownLayerError(f"no layer type with index {index} (built-in types are "
                                            f"0..{len(LAYER_TYPE_NAMES) - 1}; custom ones carry bit "
                                            f"{CUSTOM_BIT.bit_length() - 1})")
                key = LAYER_TYPE_NAMES[index]
        if not callable(creator):
            raise ArgumentTypeError(f"register_custom_layer({key!r}): creator must be callable, "
                                    f"got {type(creator).__name__}")
        if destroyer is not None and not callable(destroyer):
            raise ArgumentTypeError(f"register_custom_layer({key!r}): destroyer must be callable or None, "
                                    f"got {type(destroyer).__name__}")
        self._custom[key] = (creator, destroyer)
        return 0

    # -- loading params -------------------------------------------------------------
    # Each source is read in bounded pieces and checked as it is read (vkncnn/format/
    # datareader.py): a path is refused at stat time if it is no regular file or is too
    # large, a text .param is parsed while it streams in, so a hostile file costs at most
    # what it takes to reach its first error.
    def load_param(self, source: Source) -> int:
        """Load a text .param from a path, a file object or a DataReader."""
        with opened_reader(source, _PARAM_FILE) as (reader, name):
            graph = parse_param_reader(reader, name, MAX_PARAM_BYTES)
        return self._build(graph)

    def load_param_mem(self, text: str | bytes | bytearray | memoryview) -> int:
        """Load .param text given as str (or its UTF-8 bytes)."""
        if isinstance(text, str):
            if len(text) > MAX_PARAM_BYTES:
                raise ParamError(f"<memory>: {len(text)} characters, larger than the "
                                 f"{MAX_PARAM_BYTES}-byte limit for a .param")
            return self._build(parse_param_text(text, "<memory>"))
        if isinstance(text, (bytes, bytearray, memoryview)):
            return self._build(parse_param_reader(DataReaderFromMemory(text), "<memory>", MAX_PARAM_BYTES))
        raise ArgumentTypeError(f"load_param_mem(): expected the .param text as str or bytes, "
                                f"got {type(text).__name__}")

    def load_param_bin(self, source: Source) -> int:
        with opened_reader(source, _PARAM_BIN_FILE) as (reader, name):
            head = read_exactly(reader, HEADER_BYTES)
            check_header(head, name)  # before the rest: a stream of junk stops after 12 bytes
            data = head + reader.read_all(MAX_PARAM_BYTES + 1 - len(head))
        if len(data) > MAX_PARAM_BYTES:
            raise ParamError(f"{name}: larger than {MAX_PARAM_BYTES} bytes; not a .param.bin file")
        custom = {}
        for key in self._custom:
            if key.startswith("custom") and key[6:].isdigit():
                custom[int(key[6:]) | CUSTOM_BIT] = key
        return self._build(parse_param_bin(data, name, custom))

    def _new_layer(self, spec: LayerSpec) -> Layer:
        custom = self._custom.get(spec.type)
        if custom is not None:
            layer = custom[0]()
            if not isinstance(layer, Layer):
                raise LayerError(f"{spec.type}: custom creator returned {type(layer).__name__}, "
                                 "not a vkncnn.Layer")
            layer.type = spec.type
            layer.typeindex = layer_to_index(spec.type)
            return layer
        try:
            return create_layer(spec.type)
        except UnknownLayerError:
            raise UnknownLayerError(f"{self._where(spec)}layer type {spec.type!r} is not built in "
                                    "and not registered with register_custom_layer") from None

    def _where(self, spec: LayerSpec) -> str:
        return f"{self.graph.source}:{spec.line}: " if spec.line is not None else f"{self.graph.source}: "

    def _build(self, graph: GraphSpec) -> int:
        self._release_gpu()
        self._reset_graph()
        self.graph.source = graph.source
        blobs, index = self.graph.blobs, self.graph.blob_index
        for li, spec in enumerate(graph.layers):
            where = self._where(spec)
            layer = self._new_layer(spec)
            layer.name = spec.name
            bottoms = []
            for name in spec.bottoms:
                bi = index.get(name)
                if bi is None:
                    raise GraphError(f"{where}layer {spec.name!r} ({spec.type}) consumes blob {name!r} "
                                     "that no earlier layer produces")
                blobs[bi].consumer = li
                blobs[bi].consumers.append(li)
                bottoms.append(bi)
            tops = []
            for name in spec.tops:
                if name in index:
                    raise GraphError(f"{where}layer {spec.name!r} ({spec.type}) produces blob {name!r}, "
                                     f"already produced by layer #{blobs[index[name]].producer}")
                if len(blobs) >= graph.blob_count:
                    raise GraphError(f"{where}more blobs than the {graph.blob_count} the header declares")
                index[name] = len(blobs)
                tops.append(len(blobs))
                blobs.append(Blob(name, producer=li))
            layer.bottoms, layer.tops = bottoms, tops
            self._apply_shape_hints(layer, spec)
            try:
                ret = layer.load_param(spec.params)
            except Error as e:
                raise type(e)(f"{where}layer {spec.name!r} ({spec.type}): {e}") from None
            except Exception as e:  # a layer's own bug or a custom layer's error
                raise LayerError(f"{where}layer {spec.name!r} ({spec.type}): load_param failed: "
                                 f"{type(e).__name__}: {e}") from e
            if ret not in (None, 0):
                raise LayerError(f"{where}layer {spec.name!r} ({spec.type}): load_param returned {ret}")
            self.graph.layers.append(layer)
            self._layer_specs.append(spec)
        plan_channels_last(self.graph.layers, self.graph.blobs)
        self._bind_gpu()
        return 0

    @staticmethod
    def _apply_shape_hints(layer: Layer, spec: LayerSpec) -> None:
        hints = spec.params.get_int_array(30)
        layer.featmask = spec.params.get(31, 0)
        ntop = len(spec.tops)
        if len(hints) and ntop and len(hints) % ntop == 0:
            step = len(hints) // ntop
            layer.top_shapes = [tuple(int(v) for v in hints[i * step:(i + 1) * step]) for i in range(ntop)]

    # -- loading weights --------------------------------------------------------------
    def load_model(self, source: Source | bytes) -> int:
        """Load the .bin from a path, bytes, a file object or a DataReader."""
        if not self.graph.layers:
            raise Error("load_model() before load_param(): no layers to load weights into")
        # no size limit: weights may be many GB; they are read as layers ask for them
        with opened_reader(source) as (reader, name):
            self._load_weights(ModelBinFromDataReader(reader, name))
        return 0

    def load_model_mem(self, data: bytes | bytearray | memoryview) -> int:
        """Load the .bin from bytes-like data (bytes, bytearray, memoryview): never copied whole."""
        if isinstance(data, str):
            raise ArgumentTypeError("load_model_mem(): expected the .bin as bytes, got str (weights are "
                                    "binary; pass the file's bytes, or its path to load_model)")
        try:
            memoryview(data)
        except TypeError:
            raise ArgumentTypeError(f"load_model_mem(): expected the .bin as bytes-like data (bytes, "
                                    f"bytearray, memoryview), got {type(data).__name__}") from None
        return self.load_model(DataReaderFromMemory(data))

    def _load_weights(self, mb: ModelBin) -> None:
        self._load_each(mb)
        self._model_loaded = True
        self._pipelines_ready = False
        self._prepare()

    def _load_each(self, mb: ModelBin) -> None:
        """Every layer's load_model, errors naming the file, line and layer."""
        for layer, spec in zip(self.graph.layers, self._layer_specs):
            mb.layer_name = layer.name or f"#{spec.line}"
            try:
                ret = layer.load_model(mb)
            except Error as e:
                raise type(e)(f"{self._where(spec)}layer {layer.name!r} ({layer.type}): {e}") from None
            except Exception as e:
                raise LayerError(f"{self._where(spec)}layer {layer.name!r} ({layer.type}): load_model "
                                 f"failed: {type(e).__name__}: {e}") from e
            if ret not in (None, 0):
                raise LayerError(f"{self._where(spec)}layer {layer.name!r}: load_model returned {ret}")

    def _prepare(self) -> None:
        """create_pipeline for every layer, and upload weights when on the GPU (once)."""
        with self._lock:
            if self._pipelines_ready:
                return
            if not self._model_loaded:  # a net without weights: any weight request is an error
                self._load_each(_NoWeights())
                self._model_loaded = True
            for layer in self.graph.layers:
                ret = layer.create_pipeline(self.opt)
                if ret not in (None, 0):
                    raise LayerError(f"layer {layer.name!r} ({layer.type}): create_pipeline returned {ret}")
            if self.gpu is not None:
                self.gpu.upload_weights(self.graph.layers)
            self._pipelines_ready = True

    # -- device -----------------------------------------------------------------------
    def set_vulkan_device(self, device: int | VulkanDevice) -> None:
        """A device index (-1: the default device) or a VulkanDevice; checked against the
        devices that exist when the net binds to the GPU."""
        index = device
        if not isinstance(device, (int, np.integer, str)):  # a VulkanDevice knows its index
            index = getattr(device, "index", None)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ArgumentTypeError(f"set_vulkan_device(): expected a device index (int) or a VulkanDevice, "
                                    f"got {type(device).__name__}")
        if index < -1:
            raise ArgumentError(f"set_vulkan_device(): device index must be >= 0 (or -1 for the default), "
                                f"got {index}")
        self._vkdev_index = None if index == -1 else int(index)

    def vulkan_device(self) -> VulkanDevice | None:
        """The VulkanDevice this net runs on: once bound, or once set_vulkan_device() chose
        one; None before either, as in pyncnn."""
        if self.gpu is not None:
            return self.gpu.vkdev
        if self._vkdev_index is None:
            return None
        return get_gpu_device(self._vkdev_index)

    def _bind_gpu(self) -> None:
        """Choose the GPU path if asked for and available; otherwise the numpy path."""
        self._vulkan_at_load = self.opt.use_vulkan_compute
        if not self.opt.use_vulkan_compute:
            return
        # lazy: the GPU runtime loads when a net first asks for Vulkan; `import vkncnn` stays numpy-only
        from .gpu.planner import bind_net

        self.gpu = bind_net(self.graph, self.opt, self._vkdev_index)

    def _release_gpu(self) -> None:
        run_deferred_releases()
        gpu, self.gpu = self.gpu, None
        if gpu is not None:
            gpu.release(self.graph.layers)

    # -- introspection, as pyncnn -----------------------------------------------------
    def input_indexes(self) -> list[int]:
        return self.graph.input_indexes()

    def output_indexes(self) -> list[int]:
        return self.graph.output_indexes()

    def input_names(self) -> list[str]:
        return [self.graph.blobs[i].name for i in self.input_indexes()]

    def output_names(self) -> list[str]:
        return [self.graph.blobs[i].name for i in self.output_indexes()]

    def blobs(self) -> list[Blob]:
        return list(self.graph.blobs)

    def layers(self) -> list[Layer]:
        return list(self.graph.layers)

    def find_blob_index_by_name(self, name: str) -> int:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"find_blob_index_by_name(): expected a blob name (str), "
                                    f"got {type(name).__name__}")
        return self.graph.find_blob(name)

    def clear(self) -> None:
        self._release_gpu()
        self._reset_graph()

    def create_extractor(self) -> Extractor:
        run_deferred_releases()
        if not self.graph.layers:
            raise Error("create_extractor() before load_param(): the net has no layers")
        if self.opt.use_vulkan_compute and self.gpu is None and not self._vulkan_at_load:
            # ncnn crashes here (it prepared no GPU layers); we keep the numpy path and say why
            warn_once("opt.use_vulkan_compute was turned on after load_param(): this net was loaded for the "
                      "numpy path and runs there; set it before load_param() to use the GPU")
        return Extractor(self)

    # -- convenience beyond ncnn ------------------------------------------------------
    def run(self, inputs: Mapping[str, Any], outputs: str | Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """{input name: array} -> {output name: array}; all outputs when none named."""
        if not isinstance(inputs, Mapping):
            raise ArgumentTypeError(f"run(): expected inputs as a dict {{blob name: array}}, "
                                    f"got {type(inputs).__name__}")
        if isinstance(outputs, str):
            outputs = [outputs]  # one name, not its characters
        elif outputs is not None and not isinstance(outputs, Iterable):
            raise ArgumentTypeError(f"run(): expected outputs as a list of blob names, got {type(outputs).__name__}")
        with self.create_extractor() as ex:
            for name, value in inputs.items():
                if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
                    value = np.array([value], np.float32)  # a number is one value here, never a size
                ex.input(name, value if isinstance(value, Mat) else Mat(value))
            names = list(outputs) if outputs is not None else self.output_names()
            return {name: ex.extract(name)[1].numpy() for name in names}

    def __del__(self) -> None:
        gpu = getattr(self, "gpu", None)
        if gpu is not None:  # no locks in a finalizer (vkncnn/gpu/vulkan/lifetime.py): queued instead
            defer_gpu_release(gpu.release, self.graph.layers)


__all__ = ["Net", "Blob", "DataReader", "DataReaderFromEmpty"]
