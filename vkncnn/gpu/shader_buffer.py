"""ShaderBuffer: a device buffer of a ShaderProgram that persists across dispatches.

    buf = prog.buffer(np.arange(1000, dtype=np.float32))   # or prog.buffer((10, 100), np.int32)
    buf.write(x)                                           # same number of values as the buffer
    y = buf.read()                                         # a new array: the buffer's shape and dtype

The device holds the values flat, C order, one binding's worth of scalars: floats as
float32, or float16 when the program stores fp16 (its `sfp`); ints as int32 / uint32;
8-bit ints as they are. The host side keeps the shape and dtype it was made with, and
read() gives them back.

write() and read() each replay one small recording made on first use (a staging
copy and one buffer copy), so moving data costs no new Vulkan objects after the first
time, and a dispatch recorded earlier sees what was written last.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, GpuError, ShapeError
from ..memory_budget import check_alloc
from .vulkan.command import HostSlot, VkCompute
from .vulkan.vkmat import VkMat, storage_dtype

_FLOAT_HOST = (np.float16, np.float32, np.float64)
_INT_HOST = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


def host_dtype_of(dtype) -> np.dtype:
    """The host dtype a buffer may have: numpy floats and ints (not bool, complex or objects)."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise ArgumentTypeError(f"buffer dtype: {e}") from None
    if dt.type not in _FLOAT_HOST + _INT_HOST:
        raise ArgumentTypeError(f"a shader buffer holds floats or ints (float16/32/64, int8..int64, uint8..uint64), "
                                f"got dtype {dt}")
    return dt


def _fits(array: np.ndarray, stored: np.dtype) -> bool:
    if array.size == 0 or array.dtype.kind not in "iu" or stored.itemsize >= array.dtype.itemsize:
        return True
    info = np.iinfo(stored)
    return info.min <= int(array.min()) and int(array.max()) <= info.max


class ShaderBuffer:
    """One persistent device buffer (see the module doc). Made by ShaderProgram.buffer()."""

    def __init__(self, vkdev, opt, shape: tuple, dtype, name: str, program=None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = host_dtype_of(dtype)
        self.size = math.prod(self.shape)
        if min(self.shape, default=1) < 0:
            raise ArgumentError(f"{name}: shape {self.shape} has a negative dim")
        if self.size == 0:
            raise ArgumentError(f"{name}: a buffer needs at least one value, got shape {self.shape}")
        self.storage_dtype = storage_dtype(self.dtype, opt, vkdev)
        check_alloc(None, (self.size,), self.storage_dtype.itemsize, f"{name} of shape {self.shape}")
        self.name = name
        self.program = program  # kept alive while its buffers are: it frees them on close()
        self._vkdev = vkdev
        self._opt = opt
        # one flat tensor of the scalars: dims only matter to layers, not to a user's shader
        self._mat = VkMat.for_numpy_shape((self.size,), 1, self.storage_dtype.itemsize, opt.blob_vkallocator)
        self._slot = HostSlot()
        self._writer: VkCompute | None = None
        self._reader: VkCompute | None = None
        self._download = None

    # -- what the program binds ---------------------------------------------------------------
    @property
    def vkmat(self) -> VkMat:
        if self._mat.empty():
            raise GpuError(f"{self.name} used after its program was closed")
        return self._mat

    @property
    def nbytes(self) -> int:
        """Bytes the device holds for it (its values at the storage type)."""
        return self.size * self.storage_dtype.itemsize

    @property
    def closed(self) -> bool:
        return self._mat.empty()

    # -- data ---------------------------------------------------------------------------------
    def write(self, array) -> None:
        """Copy `array` (as many values as the buffer holds, any shape) to the device now."""
        mat = self.vkmat
        a = np.asarray(array)
        if a.dtype.kind not in "fiu":
            raise ArgumentTypeError(f"{self.name}.write: expected an array of numbers, got dtype {a.dtype}")
        if self.dtype.kind in "iu" and a.dtype.kind == "f":
            raise ArgumentTypeError(f"{self.name}.write: the buffer holds {self.dtype} values, got {a.dtype} "
                                    "(convert it first: floats would be truncated silently)")
        if a.size != self.size:
            raise ShapeError(f"{self.name}.write: the buffer holds {self.size} values (shape {self.shape}), "
                             f"got {a.size} (shape {a.shape})")
        if not _fits(a, self.storage_dtype):
            raise ArgumentError(f"{self.name}.write: values from {a.min()} to {a.max()} do not fit the "
                                f"device's {self.storage_dtype} storage")
        self._slot.array = np.ascontiguousarray(a.reshape(-1).astype(self.dtype, copy=False))
        if self._writer is None:
            writer = VkCompute(self._vkdev)
            writer.record_write(mat, self._slot, self._opt, dtype=self.storage_dtype)
            self._writer = writer
        self._writer.replay()
        self._slot.array = None  # the staging copy is made: do not keep the caller's array alive

    def read(self) -> np.ndarray:
        """The buffer's values now, as a new array of its shape and dtype."""
        mat = self.vkmat
        if self._reader is None:
            reader = VkCompute(self._vkdev)
            self._download = reader.record_download(mat, self._opt, dtype=self.storage_dtype,
                                                    what=f"the host copy of {self.name}")
            self._reader = reader
        self._reader.replay()
        out = self._download.array.reshape(self.shape)
        self._download.array = None
        return out.astype(self.dtype, copy=False)

    # -- lifetime -----------------------------------------------------------------------------
    def release(self) -> None:
        """Free the buffer and its transfer recordings (the program calls it on close())."""
        for cmd in (self._writer, self._reader):
            if cmd is not None:
                cmd.release()
        self._writer = self._reader = self._download = None
        self._mat.release()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.nbytes} bytes of {self.storage_dtype} on the device"
        return f"<ShaderBuffer {self.name} shape={self.shape} dtype={self.dtype}: {state}>"
