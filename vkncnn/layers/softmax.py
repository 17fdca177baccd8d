"""Softmax: exp(x - max) / sum(exp(x - max)) along one axis.

axis is a numpy axis of the blob ((c, d, h, w) order), negatives count from the end.
fixbug0 must be 1 for any axis other than 0: ncnn refuses older params, whose
axis meant something else on 3-D blobs. ncnn quirks kept: a 1-D blob ignores
axis, and an axis outside the blob's dims leaves it unchanged.

GPU: one row reduction to (max, sum exp(x - max)) per row along the axis
(reduction_rows.comp, see vkncnn/gpu/ops/row_reduction.py), then softmax.comp rewrites every element.
Any axis, dims 1-4, pack1 or pack4: rows are addressed on the packed layout directly.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan.vkmat import VkMat
from vkncnn.layer import Layer, register_layer


@register_layer("Softmax")
class Softmax(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.axis = pd.get(0, 0)
        self.fixbug0 = pd.get(1, 0)
        if self.fixbug0 == 0 and self.axis != 0:
            raise ParamError(f"Softmax axis={self.axis} with fixbug0=0: the param is too old, "
                             "please regenerate it (ncnn refuses it too)")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 1:
            return [norm.softmax(x, 0)]
        axis = self.axis + x.ndim if self.axis < 0 else self.axis
        if not 0 <= axis < x.ndim:
            return [x.copy()]  # ncnn does nothing for an axis the blob does not have
        return [norm.softmax(x, axis)]

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        self.reducer = rows.RowReducer(self.vkdev, opt, rows.OP_SOFTMAX, rows.FIN_STATE)
        self.apply = rows.elementwise_pipelines(self.vkdev, opt, "softmax", [])
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        if 0 in x.numpy_shape():  # nothing to normalise, no rows to dispatch (as on the CPU)
            return [x]
        axis = 0
        if x.dims > 1:
            axis = self.axis + x.dims if self.axis < 0 else self.axis
            if not 0 <= axis < x.dims:
                return [cmd.record_clone(x, opt)]  # as the numpy path: the blob unchanged
        layout = rows.numpy_axes_layout(x, (axis,))
        stats = rows.new_workspace(cmd, opt, layout.rows)
        self.reducer.record(cmd, opt, x, layout, state_out=stats)
        top = VkMat.create_like(x, cmd.blob_allocator(opt))
        total = layout.total
        cmd.record_pipeline(self.apply[layout.lanes], [x, stats, top], [total] + layout.apply_constants(),
                            rows.flat_dispatch(total // layout.lanes))
        stats.release()
        return [top]
