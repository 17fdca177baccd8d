"""Layer: the unit of computation, and the registry from type name to class.

A layer reads its params (`load_param`), its weights (`load_model`), prepares
(`create_pipeline`), and runs on the numpy path (`forward_cpu`) or, when it has a
shader, on the GPU (`forward_gpu`, recorded into a VkCompute after `upload_model`).
Capability flags are plain attributes, as in ncnn.

Built-in layers implement `forward_cpu(bottoms, opt) -> tops` on float32 ndarrays
whose ndim is the ncnn dims (numpy (w,), (h,w), (c,h,w), (c,d,h,w)). Custom
Python layers written for pyncnn override `forward(bottom, top, opt)` or
`forward_inplace(blob, opt)` on Mats instead; the base class adapts them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import Error, LayerError, UnknownLayerError
from .format.paramdict import ParamDict
from .layer_types import LAYER_TYPE_NAMES, layer_to_index
from .mat import Mat
from .memory_budget import from_memory_error

if TYPE_CHECKING:
    from .format.modelbin import ModelBin
    from .option import Option


class Layer:
    def __init__(self) -> None:
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = False
        self.support_packing = False
        self.support_bf16_storage = False
        self.support_fp16_storage = False
        self.support_int8_storage = False
        self.support_vulkan_packing = False
        self.support_any_packing = False
        self.support_vulkan_any_packing = False
        self.support_tensor_storage = False
        self.featmask = 0
        self.type = ""
        self.name = ""
        self.typeindex = -1
        self.bottoms: list[int] = []
        self.tops: list[int] = []
        self.bottom_shapes: list = []
        self.top_shapes: list = []
        self.vkdev = None

    # -- life cycle (ncnn's virtuals) ---------------------------------------
    def load_param(self, pd: ParamDict) -> int:
        return 0

    def load_model(self, mb: ModelBin) -> int:
        return 0

    def create_pipeline(self, opt: Option) -> int:
        # built-in GPU layers make their pipelines when a shape is first recorded (shapes are
        # specialisation constants): gpu.vulkan.pipeline.shader_pipeline, shared device-wide
        return 0

    def destroy_pipeline(self, opt: Option) -> int:
        return 0

    def upload_model(self, cmd: Any, opt: Option) -> int:
        return 0

    # -- numpy path ------------------------------------------------------------
    def forward_cpu(self, bottoms: list[np.ndarray], opt: Option) -> list[np.ndarray]:
        """Run on float32 arrays. Built-ins override this; the default adapts pyncnn-style layers."""
        if self.one_blob_only:
            # C order: a blob may be channels-last in memory (vkncnn/channels_last.py)
            bottom = Mat.from_array(np.array(bottoms[0], copy=True, order="C"))
            if self.support_inplace and _overrides(self, "forward_inplace"):
                _check_ret(self, self.forward_inplace(bottom, opt))
                return [bottom.numpy()]
            top = Mat()
            _check_ret(self, self.forward(bottom, top, opt))
            return [top.numpy()]
        mats = [Mat.from_array(np.array(b, copy=True, order="C")) for b in bottoms]
        if self.support_inplace and _overrides(self, "forward_inplace"):
            _check_ret(self, self.forward_inplace(mats, opt))
            return [m.numpy() for m in mats]
        tops = [Mat() for _ in self.tops]
        _check_ret(self, self.forward(mats, tops, opt))
        return [t.numpy() for t in tops]

    # pyncnn-style entry points; custom layers override one of them.
    def forward(self, bottom: Mat | list[Mat], top: Mat | list[Mat], opt: Option) -> int:
        raise LayerError(f"layer {self.name!r} ({self.type}) implements no forward")

    def forward_inplace(self, blob: Mat | list[Mat], opt: Option) -> int:
        raise LayerError(f"layer {self.name!r} ({self.type}) implements no forward_inplace")

    # -- GPU path ---------------------------------------------------------------
    def forward_gpu(self, bottoms: list, cmd: Any, opt: Option) -> list:
        raise LayerError(f"layer {self.name!r} ({self.type}) has no GPU forward")

    def __repr__(self) -> str:
        return f"<{self.type} {self.name!r}>"


def _overrides(layer: Layer, method: str) -> bool:
    return getattr(type(layer), method) is not getattr(Layer, method)


def _check_ret(layer: Layer, ret) -> None:
    if ret not in (None, 0):
        raise LayerError(f"custom layer {layer.name!r} ({layer.type}) returned {ret}")


# -- registry ---------------------------------------------------------------------
LAYER_REGISTRY: dict[str, Callable[[], Layer]] = {}


def register_layer(type_name: str) -> Callable[[type], type]:
    """Class decorator: make `type_name` in a .param create this class."""

    def add(cls: type) -> type:
        LAYER_REGISTRY[type_name] = cls
        cls.type_name = type_name
        return cls

    return add


def create_layer(type_or_index: str | int) -> Layer:
    """A new built-in layer by ncnn type name or type index."""
    # lazy: every built-in layer module (each imports this one) loads on first use, not at import
    from . import layers  # noqa: F401

    if isinstance(type_or_index, (int, np.integer)):
        if not 0 <= int(type_or_index) < len(LAYER_TYPE_NAMES):
            raise UnknownLayerError(f"layer type index {type_or_index} does not exist")
        type_or_index = LAYER_TYPE_NAMES[int(type_or_index)]
    cls = LAYER_REGISTRY.get(type_or_index)
    if cls is None:
        raise UnknownLayerError(f"layer type {type_or_index!r} is not built in nor registered")
    layer = cls()
    layer.type = type_or_index
    layer.typeindex = layer_to_index(type_or_index)
    return layer


def layer_failure(layer: Layer, exc: Exception, context: str = "") -> Error:
    """Any exception raised while running a layer, as a vkncnn.Error naming the layer.

    vkncnn's own errors keep their type; a MemoryError stays one (MemoryBudgetError); any
    other exception (a layer's bug, a custom layer's error) becomes a LayerError."""
    where = f"layer {layer.name!r} ({layer.type})" + (f" {context}" if context else "")
    if isinstance(exc, Error):
        return type(exc)(f"{where}: {exc}")
    if isinstance(exc, MemoryError):
        return from_memory_error(exc, where)
    return LayerError(f"{where} failed: {type(exc).__name__}: {exc}")
