"""Which convolutions the numpy path lets write channels-last: those feeding depthwise ones.

The numpy depthwise kernel (cpu_fallback/depthwise.py) works on channels-last (h, w, c)
memory and returns its result that way; a planar input costs it a transposing copy,
up to half again its own time. A matrix-product convolution can write its output
channels-last for nothing (the same BLAS product with its operands transposed), and a
1x1 one reads a channels-last input for nothing. So, once per graph, a Convolution is
told to write channels-last (`channels_last_top`) when its output "wants" it:

- every consumer reads a channels-last blob at no cost: a depthwise convolution, a
  1x1 stride-1 unpadded convolution, or an elementwise layer (numpy keeps its input's
  layout) whose own output wants it; and
- at least one of them carries it on to a depthwise convolution.

Any other consumer (pooling, concat, a 3x3 convolution, ...) vetoes: it would work
(numpy handles any strides) but pay a transposing copy. Arrays stay (c, h, w) ndarrays
throughout, only their strides differ; what leaves the net is made C-contiguous
(Extractor.extract, and the Mats handed to custom layers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from .layer import LAYER_REGISTRY, Layer

if TYPE_CHECKING:
    from .graph import Blob
    from .layers.convolution import Convolution

# built-in layers whose numpy kernels are elementwise ufuncs, keeping the input's layout
ELEMENTWISE = ("ReLU", "Clip", "HardSwish", "HardSigmoid", "Sigmoid", "Swish", "BinaryOp", "Eltwise", "Split")


def plan_channels_last(layers: list[Layer], blobs: Sequence[Blob]) -> None:
    """Set `channels_last_top` on every fp32 Convolution whose output wants channels-last.

    layers: in graph order (producers before consumers); blobs: the net's Blob records.
    """
    wants = [False] * len(blobs)
    for layer in reversed(layers):  # consumers first: their tops are decided
        for top in layer.tops:
            wants[top] = _wanted(blobs[top].consumers, layers, wants)
        if _fp32_conv(layer) and layer.group == 1:
            layer.channels_last_top = len(layer.tops) == 1 and wants[layer.tops[0]]


def _wanted(consumers: list[int], layers: list[Layer], wants: list[bool]) -> bool:
    reaches_depthwise = False
    for li in consumers:
        layer = layers[li]
        if _depthwise(layer):
            reaches_depthwise = True
        elif _pointwise(layer):
            reaches_depthwise |= wants[layer.tops[0]]
        elif _elementwise(layer) and all(wants[t] for t in layer.tops):
            reaches_depthwise = True
        else:
            return False
    return reaches_depthwise


def _fp32_conv(layer: Layer) -> TypeGuard[Convolution]:
    # lazy: it imports every built-in layer (vkncnn/layers/__init__.py), as create_layer does first
    from .layers.convolution import Convolution

    return (isinstance(layer, Convolution) and not layer.int8_scale_term and not layer.dynamic_weight
            and len(layer.bottoms) == 1)


def _depthwise(layer: Layer) -> bool:
    """One input channel per output channel: the numpy depthwise kernel's case."""
    return (_fp32_conv(layer) and layer.group == layer.num_output
            and layer.weight_data_size == layer.num_output * layer.kernel_w * layer.kernel_h)


def _pointwise(layer: Layer) -> bool:
    """A 1x1 stride-1 unpadded convolution: one matrix product straight off its input."""
    return (_fp32_conv(layer) and layer.group == 1 and layer.kernel_w == layer.kernel_h == 1
            and layer.stride_w == layer.stride_h == 1 and not any(layer.pads))


def _elementwise(layer: Layer) -> bool:
    return layer.type in ELEMENTWISE and type(layer) is LAYER_REGISTRY.get(layer.type)
