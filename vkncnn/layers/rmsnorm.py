"""RMSNorm: x / sqrt(mean(x^2) + eps) * gamma, over each row (affine_size == w), each (h, w)
plane of a 4-D blob (affine_size == w * h), or each channel.

GPU: rows contiguous in memory (pack1, the normalised axes innermost) take one dispatch,
rmsnorm_rows.comp, which may also rotate each row as a one-token RotaryEmbed after the norm
(a decoder's per-head q and k norms: takes_rope). Other layouts: one row reduction (sum of
squares -> 1 / rms per row, reduction_rows.comp), then normalize_rows.comp scales every
element; gamma is indexed by the position in the row.
"""

import numpy as np

from vkncnn.cpu_fallback import llm
from vkncnn.errors import GpuError, ShapeError
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
        self.support_vulkan_any_packing = True  # either elempack; pack1 rows take one dispatch

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

    @staticmethod
    def rope_source_shape(x):
        """The shape of this layer's output that a RoPE folded after it sees: its input's."""
        return tuple(x.numpy_shape())

    def takes_rope(self, x, dim: int, cos, sin, prenorm=None) -> bool:
        """Record time: can a one-token RotaryEmbed over heads of `dim` of this norm's output
        fold into its dispatch (cos, sin: (1, dim / 2) pack1 blobs)? Each row normalised
        together must be one head: pack1 rows of dim values, one after another."""
        shape = tuple(x.numpy_shape())
        if prenorm is not None or 0 in shape or dim < 2 or dim % 2 or self.affine_size != dim:
            return False
        if self.vkdev.info.max_per_stage_storage_buffers() < rows.ROPE_NORM_BINDINGS:
            return False
        layout = rows.numpy_axes_layout(x, self._check_gamma(shape))
        return (self.contiguous.takes(x, layout) and layout.row_len == dim
                and all(tuple(t.numpy_shape()) == (1, dim // 2) and t.elempack == 1 for t in (cos, sin)))

    def forward_gpu(self, bottoms, cmd, opt, rope=None):
        """rope ((1 or 2, dim, cos, sin), takes_rope): the rows rotated as a one-token
        RotaryEmbed (interleaved: 2) would, in the same dispatch."""
        x = bottoms[0]
        shape = x.numpy_shape()
        if rope is not None:
            mode, dim, cos, sin = rope
            if not self.takes_rope(x, dim, cos, sin):
                raise GpuError(f"RMSNorm {self.name!r}: this norm cannot take the RoPE after it")
            layout = rows.numpy_axes_layout(x, self._check_gamma(shape))
            return [self.contiguous.record(cmd, opt, x, layout, self.eps, self.gamma_gpu, rope=(mode, cos, sin))]
        if 0 in shape:  # nothing to normalise, no rows to dispatch (as on the CPU)
            return [x]
        layout = rows.numpy_axes_layout(x, self._check_gamma(shape))
        if self.contiguous.takes(x, layout):  # one dispatch (a decoder's rows)
            return [self.contiguous.record(cmd, opt, x, layout, self.eps, self.gamma_gpu)]
        # K, for 1 / sqrt(sum / K + eps), travels in the reducer's coeff slot
        return [self.normalizer.record(cmd, opt, x, layout, self.eps, self.gamma_gpu,
                                       coeff=float(layout.row_len))]
