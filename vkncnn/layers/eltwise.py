"""Eltwise: N same-shape blobs combined elementwise: 0 prod, 1 sum, 2 max.

coeffs (optional) weight the inputs of a sum: y = sum(coeff_i * x_i).
"""

import numpy as np

from vkncnn.cpu_fallback import binary
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer


@register_layer("Eltwise")
class Eltwise(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.op_type = pd.get(0, 0)
        self.coeffs = pd.get(1, np.zeros(0, np.float32))
        if self.op_type not in (binary.ELTWISE_PROD, binary.ELTWISE_SUM, binary.ELTWISE_MAX):
            raise ParamError(f"Eltwise op_type {self.op_type} is not 0 (prod), 1 (sum) or 2 (max)")
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) < 2:
            raise ShapeError(f"Eltwise needs at least 2 inputs, got {len(bottoms)}")
        shape = bottoms[0].shape
        if any(b.shape != shape for b in bottoms[1:]):
            raise ShapeError(f"Eltwise inputs must share one shape, got {[b.shape for b in bottoms]}")
        coeffs = self.coeffs if self.op_type == binary.ELTWISE_SUM and len(self.coeffs) else None
        if coeffs is not None and len(coeffs) < len(bottoms):
            raise ParamError(f"Eltwise has {len(coeffs)} coeffs for {len(bottoms)} inputs")
        return [binary.eltwise(bottoms, self.op_type, coeffs)]
