"""Padding: add borders to a blob: constant, replicate (edge) or reflect.

top/bottom pad h, left/right pad w, front/behind pad the channel axis of a 3-D blob or
the depth axis of a 4-D blob. A 1-D blob is padded by left/right only. With
per_channel_pad_data, constant padding of channel q uses value[q] (q counted in the
output channels for 3-D, in the channels for 4-D) instead of `value`.

GPU: shaders/padding.comp, one invocation per output scalar (or per vec4 item when the
packing axis is padded by whole items); per_channel_pad_data is uploaded once, as float bits.
"""

import math

import numpy as np

from vkncnn.cpu_fallback import shape
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import data_movement as gather
from vkncnn.gpu.vulkan.vkmat import use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("Padding")
class Padding(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the shader reads either elempack
        self.per_channel_gpu = None

    def load_param(self, pd) -> int:
        self.top = pd.get(0, 0)
        self.bottom = pd.get(1, 0)
        self.left = pd.get(2, 0)
        self.right = pd.get(3, 0)
        self.pad_type = pd.get(4, 0)
        self.value = pd.get(5, 0.0)
        self.per_channel_pad_data_size = pd.get(6, 0)
        self.front = pd.get(7, 0)
        self.behind = pd.get(8, 0)
        if self.pad_type not in (shape.PAD_CONSTANT, shape.PAD_REPLICATE, shape.PAD_REFLECT):
            raise ParamError(f"Padding: type {self.pad_type} is not 0 (constant), 1 (replicate) or 2 (reflect)")
        return 0

    def load_model(self, mb) -> int:
        self.per_channel_pad_data = None
        if self.per_channel_pad_data_size:
            self.per_channel_pad_data = mb.load(self.per_channel_pad_data_size, 1).astype(np.float32)
        return 0

    def _values(self, n: int) -> np.ndarray | float:
        """Constant pad value per channel (n channels), or the scalar `value`."""
        if self.per_channel_pad_data is None:
            return np.float32(self.value)
        if len(self.per_channel_pad_data) < n:
            raise ShapeError(f"Padding: per_channel_pad_data has {len(self.per_channel_pad_data)} values, "
                             f"{n} channels need one each")
        return self.per_channel_pad_data[:n]

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if not any((self.top, self.bottom, self.left, self.right, self.front, self.behind)):
            return [x]
        if min(self.top, self.bottom, self.left, self.right, self.front, self.behind) < 0:
            # ncnn's border copy has no defined meaning for them: depending on the packing
            # it crops, keeps the wrong rows, reads garbage or writes past its buffer
            raise ShapeError(f"Padding: negative pads are not supported (top {self.top}, bottom {self.bottom}, "
                             f"left {self.left}, right {self.right}, front {self.front}, behind {self.behind})")
        check_alloc(opt, self._out_shape(x.shape), 4, "the padded output")
        hw = [(self.top, self.bottom), (self.left, self.right)]
        try:
            if x.ndim == 1:
                y = shape.pad_last_axes(x, [(self.left, self.right)], self.pad_type, np.float32(self.value))
            elif x.ndim == 2:
                y = shape.pad_last_axes(x, hw, self.pad_type, np.float32(self.value))
            elif x.ndim == 3:
                if self.pad_type == shape.PAD_CONSTANT:
                    y = self._pad_constant_3d(x, x.shape[0] + self.front + self.behind, hw)
                else:
                    y = shape.pad_last_axes(x, [(self.front, self.behind)] + hw, self.pad_type, 0.0)
            elif x.ndim == 4:
                y = self._pad_4d(x, hw)
            else:
                raise ShapeError(f"Padding takes a 1-D to 4-D blob, got shape {x.shape}")
        except ValueError as e:
            raise ShapeError(f"Padding {x.shape}: {e}") from None
        return [y]

    def _out_shape(self, shape: tuple) -> tuple:
        """The padded shape (front/behind pad c of a 3-D blob, d of a 4-D one)."""
        if not 1 <= len(shape) <= 4:
            return tuple(shape)  # refused below, with its own message
        w = shape[-1] + self.left + self.right
        if len(shape) == 1:
            return (w,)
        h = shape[-2] + self.top + self.bottom
        if len(shape) == 3:
            return (shape[0] + self.front + self.behind, h, w)
        if len(shape) == 4:
            return (shape[0], shape[1] + self.front + self.behind, h, w)
        return (h, w)

    def _pad_constant_3d(self, x, outc, hw):
        """New channels are whole planes of their value; kept channels get an h/w border of
        the value of their *output* channel index (ncnn indexes per_channel_pad_data so)."""
        values = self._values(outc)
        per_channel = np.ndim(values) > 0
        kept = slice(self.front, self.front + x.shape[0])
        planes = shape.pad_last_axes(x, hw, shape.PAD_CONSTANT, values[kept] if per_channel else values)
        out = np.empty((outc,) + planes.shape[1:], np.float32)
        out[...] = values[:, None, None] if per_channel else values
        out[kept] = planes
        return out

    def _pad_4d(self, x, hw):
        # one value per channel, shared by all of its depth slices
        return shape.pad_last_axes(x, [(self.front, self.behind)] + hw, self.pad_type, self._values(x.shape[0]))

    # -- GPU ------------------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0
        fp16 = use_fp16_storage(opt, self.vkdev)
        for vec4 in (0, 1):  # warm the device-wide cache; forward_gpu picks by the tensors
            gather.shader_pipeline(self.vkdev, "padding", fp16, defines={"VEC4": vec4})
        return 0

    def upload_model(self, cmd, opt) -> int:
        self.per_channel_gpu = None
        if self.per_channel_pad_data is not None:
            bits = np.ascontiguousarray(self.per_channel_pad_data, np.float32).view(np.int32)
            self.per_channel_gpu = cmd.record_upload(bits, opt, elempack=1)
        return 0

    def destroy_pipeline(self, opt) -> int:
        if self.per_channel_gpu is not None:
            self.per_channel_gpu.release()
            self.per_channel_gpu = None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        xshape = tuple(x.numpy_shape())
        ndim = len(xshape)
        pads = (self.top, self.bottom, self.left, self.right, self.front, self.behind)
        if not any(pads):
            return [gather.view(x, xshape)]
        if min(pads) < 0:
            raise ShapeError(f"Padding: negative pads are not supported (top {self.top}, bottom {self.bottom}, "
                             f"left {self.left}, right {self.right}, front {self.front}, behind {self.behind})")
        # (before, after) per logical 4-D axis (c, d, h, w)
        none = (0, 0)
        edges = {1: [none, none, none, (self.left, self.right)],
                 2: [none, none, (self.top, self.bottom), (self.left, self.right)],
                 3: [(self.front, self.behind), none, (self.top, self.bottom), (self.left, self.right)],
                 4: [none, (self.front, self.behind), (self.top, self.bottom), (self.left, self.right)]}.get(ndim)
        if edges is None:
            raise ShapeError(f"Padding takes a 1-D to 4-D blob, got shape {xshape}")
        # the blob as a logical 4-D (c, d, h, w) with extents of 1 where it has no axis
        in4 = {1: (1, 1, 1) + xshape, 2: (1, 1) + xshape, 3: (xshape[0], 1) + xshape[1:], 4: xshape}[ndim]
        out4 = tuple(n + b + a for n, (b, a) in zip(in4, edges))
        out_shape = {1: out4[3:], 2: out4[2:], 3: (out4[0],) + out4[2:], 4: out4}[ndim]
        check_alloc(opt, out_shape, x.scalar_size(), "the padded output")
        pack_axis = {1: 3, 2: 2, 3: 0, 4: 0}[ndim]  # numpy axis 0 of the blob
        if (self.pad_type != shape.PAD_CONSTANT and math.prod(out_shape) > 0
                and any(n == 0 and (b or a) for n, (b, a) in zip(in4, edges))):
            raise ShapeError(f"Padding {xshape}: an empty axis has no values to replicate or reflect")
        if self.pad_type == shape.PAD_REFLECT:
            for n, (b, a) in zip(in4, edges):
                if b or a:
                    try:
                        shape.pad_index(n + b + a, b, n, self.pad_type)
                    except ValueError as e:
                        raise ShapeError(f"Padding {xshape}: {e}") from None
        per_channel = 0
        if self.pad_type == shape.PAD_CONSTANT and ndim >= 3 and self.per_channel_pad_data is not None:
            self._values(out4[0])  # enough values for every channel, or a ShapeError
            per_channel = 1

        top = gather.new_like_shape(out_shape, gather.output_elempack(out_shape, opt), x.scalar_size(), cmd, opt)
        b, a = edges[pack_axis]
        vec4 = (x.elempack == 4 and top.elempack == 4 and b % 4 == 0 and a % 4 == 0
                and (self.pad_type == shape.PAD_CONSTANT or b == a == 0))
        befores = [e[0] for e in edges]
        if vec4:  # the packing axis counts items
            in4, out4 = list(in4), list(out4)
            in4[pack_axis] //= 4
            out4[pack_axis] //= 4
            befores[pack_axis] //= 4
        total = int(np.prod(out4))
        constants = [total, *out4, *in4, *befores, self.pad_type, float(self.value), per_channel,
                     gather.inner_of(xshape), gather.inner_of(out_shape), x.elempack, top.elempack]
        pipeline = gather.shader_pipeline(cmd.vkdev, "padding", gather.storage_is_fp16(x), defines={"VEC4": int(vec4)})
        table = None
        if per_channel:
            table = self.per_channel_gpu
            if table is None:  # not uploaded at load (no upload_model call): a per-plan copy
                bits = np.ascontiguousarray(self.per_channel_pad_data, np.float32).view(np.int32)
                table = cmd.record_upload(bits, opt, elempack=1)
        cmd.record_pipeline(pipeline, [x, top, table], constants, gather.flat_grid(total))
        return [top]
