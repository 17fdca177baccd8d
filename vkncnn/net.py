"""Net: a loaded model, its layers and blobs, and the device it runs on.

Loading builds the graph from a parsed .param (text or binary), checks it (every
blob produced once, consumed only after it is produced, counts as declared), then
reads weights layer by layer. Running happens in an Extractor.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field

from .channels_last import plan_channels_last
from .errors import Error, GraphError, LayerError, ParamError, UnknownLayerError, WeightError
from .extractor import Extractor, defer_gpu_release, run_deferred_releases
from .format.datareader import DataReader, DataReaderFromEmpty, as_reader
from .format.graph_spec import GraphSpec, LayerSpec
from .format.modelbin import ModelBin, ModelBinFromDataReader
from .format.param_bin import parse_param_bin
from .format.param_text import parse_param_text
from .layer import Layer, create_layer
from .layer_types import CUSTOM_BIT, layer_to_index
from .option import Option

# A .param text file this large is not a model; refusing it bounds memory use.
MAX_PARAM_BYTES = 256 << 20


@dataclass
class Blob:
    name: str
    producer: int = -1
    consumer: int = -1  # the last consumer, as ncnn records it
    consumers: list[int] = field(default_factory=list)
    shape: tuple = ()


class _NoWeights(ModelBin):
    """Stands in when load_model was never called: any weight request is an error."""

    def __init__(self) -> None:
        self.layer_name = None

    def load_flat(self, n: int, type_: int):
        raise WeightError(f"layer {self.layer_name!r} needs weights but load_model() was not called")


class Net:
    def __init__(self) -> None:
        self.opt = Option()
        self._custom: dict[str, tuple] = {}
        self._vkdev_index: int | None = None
        self._lock = threading.Lock()
        self._reset_graph()

    def _reset_graph(self) -> None:
        self._layers: list[Layer] = []
        self._blobs: list[Blob] = []
        self._blob_index: dict[str, int] = {}
        self._layer_specs: list[LayerSpec] = []
        self._source = "<param>"
        self._model_loaded = False
        self._pipelines_ready = False
        self.gpu = None  # a vkncnn.gpu.runtime.NetGpu once the GPU path is bound

    # -- context manager, as pyncnn ----------------------------------------------
    def __enter__(self) -> Net:
        return self

    def __exit__(self, *exc) -> None:
        self.clear()

    # -- custom layers ------------------------------------------------------------
    def register_custom_layer(self, type_or_index, creator, destroyer=None, userdata=None) -> int:
        """Make `type` in a .param create `creator()`; must come before load_param."""
        if isinstance(type_or_index, int):
            key = f"custom{type_or_index & ~CUSTOM_BIT}" if type_or_index & CUSTOM_BIT else None
            if key is None:
                from .layer_types import LAYER_TYPE_NAMES
                if not 0 <= type_or_index < len(LAYER_TYPE_NAMES):
                    raise UnknownLayerError(f"no layer type with index {type_or_index}")
                key = LAYER_TYPE_NAMES[type_or_index]
        else:
            key = str(type_or_index)
        if not callable(creator):
            raise Error(f"register_custom_layer({key!r}): creator must be callable")
        self._custom[key] = (creator, destroyer)
        return 0

    # -- loading params -------------------------------------------------------------
    def load_param(self, source) -> int:
        """Load a text .param from a path, a file object or a DataReader."""
        reader, name = as_reader(source)
        data = reader.read_all(MAX_PARAM_BYTES + 1)
        if len(data) > MAX_PARAM_BYTES:
            raise ParamError(f"{name}: larger than {MAX_PARAM_BYTES} bytes; not a .param file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParamError(f"{name}: not UTF-8 text at byte {e.start} (a binary .param? "
                             "use load_param_bin)") from None
        return self._build(parse_param_text(text, name))

    def load_param_mem(self, text) -> int:
        if isinstance(text, (bytes, bytearray, memoryview)):
            text = bytes(text).decode("utf-8", "strict")
        return self._build(parse_param_text(str(text), "<memory>"))

    def load_param_bin(self, source) -> int:
        reader, name = as_reader(source)
        data = reader.read_all(MAX_PARAM_BYTES + 1)
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
        return f"{self._source}:{spec.line}: " if spec.line is not None else f"{self._source}: "

    def _build(self, graph: GraphSpec) -> int:
        self._release_gpu()
        self._reset_graph()
        self._source = graph.source
        blobs, index = self._blobs, self._blob_index
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
            self._layers.append(layer)
            self._layer_specs.append(spec)
        plan_channels_last(self._layers, self._blobs)
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
    def load_model(self, source) -> int:
        """Load the .bin from a path, bytes, a file object or a DataReader."""
        if not self._layers:
            raise Error("load_model() before load_param(): no layers to load weights into")
        reader, name = as_reader(source)
        mb = ModelBinFromDataReader(reader, name)
        self._load_weights(mb)
        return 0

    def load_model_mem(self, data) -> int:
        return self.load_model(bytes(data))

    def _load_weights(self, mb: ModelBin) -> None:
        self._load_each(mb)
        self._model_loaded = True
        self._pipelines_ready = False
        self._prepare()

    def _load_each(self, mb: ModelBin) -> None:
        """Every layer's load_model, errors naming the file, line and layer."""
        for layer, spec in zip(self._layers, self._layer_specs):
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
            for layer in self._layers:
                ret = layer.create_pipeline(self.opt)
                if ret not in (None, 0):
                    raise LayerError(f"layer {layer.name!r} ({layer.type}): create_pipeline returned {ret}")
            if self.gpu is not None:
                self.gpu.upload_weights(self._layers)
            self._pipelines_ready = True

    # -- device -----------------------------------------------------------------------
    def set_vulkan_device(self, device) -> None:
        self._vkdev_index = device if isinstance(device, int) else getattr(device, "index", 0)

    def vulkan_device(self):
        return None if self.gpu is None else self.gpu.vkdev

    def _bind_gpu(self) -> None:
        """Choose the GPU path if asked for and available; otherwise the numpy path."""
        if not self.opt.use_vulkan_compute:
            return
        try:
            from .gpu.runtime import bind_net
        except ImportError:
            return
        self.gpu = bind_net(self)

    def _release_gpu(self) -> None:
        run_deferred_releases()
        gpu, self.gpu = self.gpu, None
        if gpu is not None:
            gpu.release(self._layers)

    # -- introspection, as pyncnn -----------------------------------------------------
    def input_indexes(self) -> list[int]:
        return [top for layer in self._layers if layer.type == "Input" for top in layer.tops]

    def output_indexes(self) -> list[int]:
        return [i for i, b in enumerate(self._blobs) if b.producer != -1 and not b.consumers]

    def input_names(self) -> list[str]:
        return [self._blobs[i].name for i in self.input_indexes()]

    def output_names(self) -> list[str]:
        return [self._blobs[i].name for i in self.output_indexes()]

    def blobs(self) -> list[Blob]:
        return list(self._blobs)

    def layers(self) -> list[Layer]:
        return list(self._layers)

    def find_blob_index_by_name(self, name: str) -> int:
        return self._blob_index.get(name, -1)

    def clear(self) -> None:
        self._release_gpu()
        self._reset_graph()

    def create_extractor(self):
        run_deferred_releases()
        if not self._layers:
            raise Error("create_extractor() before load_param(): the net has no layers")
        return Extractor(self)

    # -- convenience beyond ncnn ------------------------------------------------------
    def run(self, inputs: dict, outputs=None) -> dict:
        """{input name: array} -> {output name: array}; all outputs when none named."""
        from .mat import Mat
        with self.create_extractor() as ex:
            for name, value in inputs.items():
                ex.input(name, value if isinstance(value, Mat) else Mat(value))
            names = list(outputs) if outputs is not None else self.output_names()
            return {name: ex.extract(name)[1].numpy() for name in names}

    def __del__(self) -> None:
        gpu = getattr(self, "gpu", None)
        if gpu is not None:  # no locks in a finalizer (vkncnn/gpu/lifetime.py): queued instead
            defer_gpu_release(gpu.release, self._layers)


_warned: set[str] = set()


def warn_once(message: str) -> None:
    """One warning per distinct message per process (e.g. 'no Vulkan device')."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


__all__ = ["Net", "Blob", "DataReader", "DataReaderFromEmpty"]
