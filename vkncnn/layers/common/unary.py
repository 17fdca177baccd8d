"""UnaryLayer: the shape shared by one-input elementwise layers (ReLU, Sigmoid, Exp, ...).

On the numpy path a subclass's `forward_cpu` calls its kernel; on the GPU every one of
them is shaders/unaryop.comp with the subclass's op code and up to three float params
as specialization constants. A subclass sets `gpu_op` and, if it has params, returns
them from `gpu_params()`.
"""

from __future__ import annotations

from ...gpu.ops import elementwise
from ...layer import Layer


class UnaryLayer(Layer):
    gpu_op: int = -1

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self._unary = None

    def gpu_params(self) -> tuple:
        return ()

    def create_pipeline(self, opt) -> int:
        self._unary = elementwise.unary_gpu(self, opt, self.gpu_op, *self.gpu_params())
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        return [self._unary.forward(bottoms[0], cmd, opt)]


class ElementwiseBatch:
    """Mixin for a UnaryLayer whose forward_cpu maps every value alone, whatever the shape:
    the stacked batch is then one bigger array, one call instead of one per item."""

    batch_native = True

    def forward_cpu_batch(self, bottoms, sizes, opt):
        return self.forward_cpu(bottoms, opt)
