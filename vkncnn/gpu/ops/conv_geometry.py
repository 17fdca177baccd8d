"""How a convolution-family shader reads its input and slides its kernel: Plane and
ConvGeometry, shared by the direct and matrix-product recorders (convolution.py) and the
Winograd path (winograd_convolution.py)."""

from __future__ import annotations


class Plane:
    """An input tensor read as (channels, h, w) planes: scalar addressing for the shaders."""

    __slots__ = ("channels", "cstep", "elempack", "h", "w")

    def __init__(self, channels: int, h: int, w: int, cstep: int, elempack: int) -> None:
        self.channels, self.h, self.w, self.cstep, self.elempack = channels, h, w, cstep, elempack


class ConvGeometry:
    """Kernel, dilation and stride, and the offset of output (0, 0) in the input.

    For a convolution pad_top/pad_left are the leading padding (negative: a crop); for a
    transposed convolution they are the rows/columns cut from the full output.
    """

    __slots__ = ("dilation_h", "dilation_w", "kernel_h", "kernel_w", "pad_left", "pad_top", "pad_value",
                 "stride_h", "stride_w")

    def __init__(self, kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h, pad_top, pad_left,
                 pad_value=0.0) -> None:
        self.kernel_w, self.kernel_h = int(kernel_w), int(kernel_h)
        self.dilation_w, self.dilation_h = int(dilation_w), int(dilation_h)
        self.stride_w, self.stride_h = int(stride_w), int(stride_h)
        self.pad_top, self.pad_left, self.pad_value = int(pad_top), int(pad_left), float(pad_value)

    def specs(self) -> list:
        return [self.kernel_w, self.kernel_h, self.dilation_w, self.dilation_h, self.stride_w, self.stride_h]
