"""RMSNorm: x / sqrt(mean(x^2) + eps) * gamma, over each row (affine_size == w), each (h, w)
plane of a 4-D blob (affine_size == w * h), or each channel.

GPU: one row reduction (sum of squares -> 1 / rms per row, reduction_rows.comp), then
normalize_rows.comp scales every element; gamma is indexed by the position in the row.
"""

import numpy as np

from vkncnn.cpu_fallback import llm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.layer import Layer, register_layer


@register_layer("RMSNorm")
class RMSNorm(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.affine_size = pd.get(0, 0)
        self.eps = pd.get(1, 0.001)
        self.affine = pd.get(2, 1)
        return 0

    def load_model(self, mb) -> int:
        self.gamma = mb.load(self.affine_size, 1) if self.affine else None
        return 0

    def _check_gamma(self, shape: tuple) -> tuple:
        """The axes normalised together; gamma must cover exactly them (ncnn would read past it)."""
        axes = llm.rms_group_axes(shape, self.affine_size)
        inner = int(np.prod([shape[a] for a in axes]))
        if self.gamma is not None and self.gamma.size != inner:
            raise ShapeError(f"RMSNorm gamma has {self.gamma.size} values but input {shape} normalises "
                             f"{inner} elements together")
        return axes

    def forward_cpu(self, bottoms, opt):
        self._check_gamma(bottoms[0].shape)
        return [llm.rms_norm(bottoms[0], self.gamma, self.eps, self.affine_size)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        self.normalizer = rows.RowNormalizer(self.vkdev, opt, rows.OP_SUMSQ, rows.FIN_RMS,
                                             affine_index=1 if self.gamma is not None else 0)
        self.contiguous = rows.ContiguousRmsNorm(self.vkdev, opt, affine=self.gamma is not None)
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.gamma_gpu = cmd.record_upload(self.gamma, opt) if self.gamma is not None else None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        shape = x.numpy_shape()
        if 0 in shape:  # nothing to normalise, no rows to dispatch (as on the CPU)
            return [x]
        layout = rows.numpy_axes_layout(x, self._check_gamma(shape))
        if self.contiguous.takes(x, layout):  # one dispatch (a decoder's rows)
            return [self.contiguous.record(cmd, opt, x, layout, self.eps, self.gamma_gpu)]
        # K, for 1 / sqrt(sum / K + eps), travels in the reducer's coeff slot
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_gpu,
                                       coeff=float(layout.row_len))]
