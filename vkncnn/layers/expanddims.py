"""ExpandDims: insert axes of extent 1 at the positions `axes` of the output
(numpy.expand_dims: negative axes count from the end of the output).

ncnn reads the legacy expand_w/h/d/c flags but only `axes` has an effect: kept so.
A result beyond 4 dims, or axes none of which fit the result, leave the blob unchanged, as
ncnn does; an axis outside the result is ignored, a repeated one counts once.

GPU: a view of the same buffer when the bytes agree (always in elempack 1), else a
repacking copy (shaders/gather.comp).
"""

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.layer import Layer, register_layer


@register_layer("ExpandDims")
class ExpandDims(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # a view or a copy, from either elempack

    def load_param(self, pd) -> int:
        self.flags = {"w": pd.get(0, 0), "h": pd.get(1, 0), "d": pd.get(11, 0), "c": pd.get(2, 0)}
        self.axes = pd.get_int_array(3)
        return 0

    def _out_shape(self, in_shape: tuple) -> tuple:
        out_ndim = len(in_shape) + len(self.axes)
        if len(self.axes) == 0 or out_ndim > 4:
            return tuple(in_shape)
        # as ncnn: an axis outside the result is ignored and a repeated one counts once; the
        # result still has out_ndim dims, the ones no axis claimed filled by the input's
        # extents with 1s in front (the sizes an ncnn Mat of fewer dims reports)
        positions = {a + out_ndim if a < 0 else a for a in map(int, self.axes)} & set(range(out_ndim))
        if not positions:
            return tuple(in_shape)
        dims = iter((1,) * (out_ndim - len(positions) - len(in_shape)) + tuple(in_shape))
        return tuple(1 if i in positions else next(dims) for i in range(out_ndim))

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        out = self._out_shape(x.shape)
        return [x if out == x.shape else x.reshape(out)]

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        return [gather.reshape_to(x, self._out_shape(x.numpy_shape()), cmd, opt)]
