"""Eltwise: N same-shape blobs combined elementwise: 0 prod, 1 sum, 2 max.

coeffs (optional) weight the inputs of a sum: y = sum(coeff_i * x_i).
"""

import numpy as np

from vkncnn.cpu_fallback import binary
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import Layer, register_layer


@register_layer("Eltwise")
class Eltwise(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.op_type = pd.get(0, 0)
        self.coeffs = pd.get(1, np.zeros(0, np.float32))
        if self.op_type not in (binary.ELTWISE_PROD, binary.ELTWISE_SUM, binary.ELTWISE_MAX):
            raise ParamError(f"Eltwise op_type {self.op_type} is not 0 (prod), 1 (sum) or 2 (max)")
        return 0

    def sum_coeffs(self):
        """The coeffs that apply: a sum's, when given (ncnn ignores them for prod and max)."""
        return self.coeffs if self.op_type == binary.ELTWISE_SUM and len(self.coeffs) else None

    def check_inputs(self, shapes: list) -> None:
        if len(shapes) < 2:
            raise ShapeError(f"Eltwise needs at least 2 inputs, got {len(shapes)}")
        if any(s != shapes[0] for s in shapes[1:]):
            raise ShapeError(f"Eltwise inputs must share one shape, got {shapes}")
        coeffs = self.sum_coeffs()
        if coeffs is not None and len(coeffs) < len(shapes):
            raise ParamError(f"Eltwise has {len(coeffs)} coeffs for {len(shapes)} inputs")

    def forward_cpu(self, bottoms, opt):
        self.check_inputs([b.shape for b in bottoms])
        return [binary.eltwise(bottoms, self.op_type, self.sum_coeffs())]

    # -- GPU: eltwise.comp, folding the inputs two at a time --
    def create_pipeline(self, opt) -> int:
        self.gpu_op = None
        if self.vkdev is not None:
            self.gpu_op = elementwise.EltwiseGpu(self.vkdev, opt, self.op_type, self.sum_coeffs())
        return 0

    # the GPU planner may fold a ReLU that alone reads this layer's output into its dispatch
    takes_gpu_activation = True

    def forward_gpu(self, bottoms, cmd, opt, activation=None):
        """`activation` (type, p0, p1): applied in the same dispatch (a folded ReLU)."""
        self.check_inputs([b.numpy_shape() for b in bottoms])
        return [self.gpu_op.forward(bottoms, cmd, opt, activation)]
