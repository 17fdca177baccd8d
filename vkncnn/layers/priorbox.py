"""PriorBox: the SSD anchor grid for one feature map.

Caffe style (default): for every cell of the feature map (bottom 0) and every min size,
a square min box, a sqrt(min*max) box, and one box per aspect ratio (plus its flip),
normalised by the image size (params 9/10, or bottom 1's w/h when they are -233).
Output (2, 4*w*h*num_prior): row 0 the boxes, row 1 the four variances repeated.

MXNet style (_contrib_MultiBoxPrior), chosen by one bottom, image_width = image_height =
-233 and no max sizes: sizes at ratio 1 then sizes[0] at the other ratios, already in
0..1 units, output (4*w*h*num_prior,).

GPU: shaders/priorbox.comp writes one prior of one cell per invocation, from the prior's
half extents (computed on the host by the numpy kernel itself, on a one-cell map at the
origin, so both paths share one definition) and the grid steps; the inputs are only
looked at for their shapes.
"""

import math

import numpy as np

from vkncnn.cpu_fallback import detection
from vkncnn.errors import ParamError, ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan.pipeline import shader_pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat, storage_elemsize, use_fp16_storage
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc

AUTO = -233


def _wh(blob: np.ndarray) -> tuple[int, int]:
    """ncnn's w and h of a blob of any dims (h is 1 for a 1-D blob)."""
    return int(blob.shape[-1]), int(blob.shape[-2]) if blob.ndim >= 2 else 1


@register_layer("PriorBox")
class PriorBox(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True  # only the shapes of the inputs are read

    def load_param(self, pd) -> int:
        self.min_sizes = pd.get_float_array(0)
        self.max_sizes = pd.get_float_array(1)
        self.aspect_ratios = pd.get_float_array(2)
        self.variances = np.array([pd.get(3, 0.1), pd.get(4, 0.1), pd.get(5, 0.2), pd.get(6, 0.2)],
                                  np.float32)
        self.flip = pd.get(7, 1)
        self.clip = pd.get(8, 0)
        self.image_width = pd.get(9, 0)
        self.image_height = pd.get(10, 0)
        self.step_width = pd.get(11, -233.0)
        self.step_height = pd.get(12, -233.0)
        self.offset = pd.get(13, 0.0)
        self.step_mmdetection = pd.get(14, 0)
        self.center_mmdetection = pd.get(15, 0)
        if len(self.min_sizes) == 0:
            raise ParamError("PriorBox needs at least one min size (param 0), got none")
        if len(self.max_sizes) and len(self.max_sizes) != len(self.min_sizes):
            # ncnn pairs max_sizes[k] with min_sizes[k]: other lengths read past the array
            # or leave priors unwritten
            raise ParamError(f"PriorBox needs one max size per min size, got {len(self.min_sizes)} "
                             f"min sizes and {len(self.max_sizes)} max sizes")
        return 0

    def _is_mxnet_style(self, n_bottoms: int) -> bool:
        return (n_bottoms == 1 and self.image_width == AUTO and self.image_height == AUTO
                and len(self.max_sizes) == 0)

    def forward_cpu(self, bottoms, opt):
        if not bottoms:
            raise ShapeError("PriorBox needs the feature map as bottom 0")
        w, h = _wh(bottoms[0])
        mxnet = self._is_mxnet_style(len(bottoms))
        self._check_budget(opt, w * h * self._num_prior(mxnet), mxnet, 4)
        if mxnet:
            return [self._forward_mxnet(w, h)]

        image_w, image_h = self._image_size([b.shape for b in bottoms])
        step_w = self._auto_step(self.step_width, image_w, w)
        step_h = self._auto_step(self.step_height, image_h, h)
        top = detection.priorbox_caffe(
            w, h, image_w, image_h, self.min_sizes, self.max_sizes, self.aspect_ratios, self.variances,
            bool(self.flip), bool(self.clip), step_w, step_h, self.offset, bool(self.center_mmdetection))
        return [top]

    def _num_prior(self, mxnet: bool) -> int:
        """Priors per cell: the size and ratio arrays in the params decide it."""
        if mxnet:
            return len(self.min_sizes) - 1 + len(self.aspect_ratios)
        per_size = 1 + (1 if len(self.max_sizes) else 0) + len(self.aspect_ratios) * (2 if self.flip else 1)
        return len(self.min_sizes) * per_size

    @staticmethod
    def _check_budget(opt, count: int, mxnet: bool, itemsize: int) -> None:
        """4 values per prior of every cell; Caffe style adds a row of variances."""
        check_alloc(opt, (4 * count,) if mxnet else (2, 4 * count), itemsize, "the prior boxes")

    def _image_size(self, bottom_shapes: list) -> tuple:
        image_w, image_h = self.image_width, self.image_height
        if AUTO in (image_w, image_h):
            if len(bottom_shapes) < 2:
                raise ShapeError("PriorBox with image_width/height -233 takes the image size from "
                                 "bottom 1, but only one bottom was given")
            iw, ih = _shape_wh(bottom_shapes[1])
            image_w = iw if image_w == AUTO else image_w
            image_h = ih if image_h == AUTO else image_h
        return image_w, image_h

    def _auto_step(self, step: float, image_size: int, feature_size: int) -> float:
        if step != AUTO:
            return step
        if feature_size <= 0:
            raise ShapeError(f"PriorBox: the feature map is empty ({feature_size} pixels along an axis): "
                             "no step to derive from the image size")
        step = np.float32(image_size) / np.float32(feature_size)
        return float(math.ceil(step)) if self.step_mmdetection else float(step)

    def _forward_mxnet(self, w: int, h: int) -> np.ndarray:
        if len(self.aspect_ratios) == 0:
            # ncnn sizes the output for len(sizes) - 1 + len(ratios) priors but always writes
            # len(sizes) of them: with no ratio it overruns its buffer
            raise ParamError(f"PriorBox (mxnet style: one bottom, image size -233, no max sizes) needs "
                             f"at least one aspect ratio (param 2; the first is taken as 1), got none "
                             f"with sizes {self.min_sizes.tolist()}")
        step_w = self.step_width if self.step_width != AUTO else float(np.float32(1) / np.float32(w))
        step_h = self.step_height if self.step_height != AUTO else float(np.float32(1) / np.float32(h))
        return detection.priorbox_mxnet(w, h, self.min_sizes, self.aspect_ratios, step_w, step_h,
                                        self.offset, bool(self.clip))

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0

        fp16 = use_fp16_storage(opt, self.vkdev)
        self.pipelines = {mxnet: shader_pipeline(self.vkdev, "priorbox", fp16, [mxnet], (rows.FLAT_LOCAL, 1, 1))
                          for mxnet in (0, 1)}
        return 0

    def _grid(self, shapes: list, mxnet: bool) -> tuple:
        """(half extents per prior (n, 2), start_x, start_y, step_w, step_h, image_w, image_h)."""
        F32 = np.float32
        w, h = _shape_wh(shapes[0])
        if mxnet:
            if len(self.aspect_ratios) == 0:
                self._forward_mxnet(w, h)  # raises the numpy path's ParamError
            step_w = F32(self.step_width if self.step_width != AUTO else F32(1) / F32(w))
            step_h = F32(self.step_height if self.step_height != AUTO else F32(1) / F32(h))
            # every cell of a zero-step grid is centred at 0: boxes are (-hw, -hh, hw, hh)
            boxes = detection.priorbox_mxnet(w, h, self.min_sizes, self.aspect_ratios, 0.0, 0.0, 0.0, False)
            half = boxes.reshape(-1, 4)[:, 2:4]
            half = half[:half.shape[0] // (w * h)]
            offset = F32(self.offset)
            return half, offset * step_w, offset * step_h, step_w, step_h, 1.0, 1.0
        image_w, image_h = self._image_size(shapes)
        step_w = F32(self._auto_step(self.step_width, image_w, w))
        step_h = F32(self._auto_step(self.step_height, image_h, h))
        # one cell centred at 0 in a 1 x 1 image: the boxes are (-hw, -hh, hw, hh) exactly
        boxes = detection.priorbox_caffe(1, 1, 1, 1, self.min_sizes, self.max_sizes, self.aspect_ratios,
                                         self.variances, bool(self.flip), False, 0.0, 0.0, 0.0, False)[0]
        half = boxes.reshape(-1, 4)[:, 2:4]
        offset, one = F32(self.offset), F32(1)
        if self.center_mmdetection:
            start_x, start_y = offset * (step_w - one), offset * (step_h - one)
        else:
            start_x, start_y = offset * step_w, offset * step_h
        return half, start_x, start_y, step_w, step_h, image_w, image_h

    def forward_gpu(self, bottoms, cmd, opt):
        if not bottoms:
            raise ShapeError("PriorBox needs the feature map as bottom 0")
        shapes = [b.numpy_shape() for b in bottoms]
        mxnet = self._is_mxnet_style(len(bottoms))
        half, start_x, start_y, step_w, step_h, image_w, image_h = self._grid(shapes, mxnet)
        w, h = _shape_wh(shapes[0])
        num_prior = half.shape[0]
        count = w * h * num_prior
        self._check_budget(opt, count, mxnet, storage_elemsize(opt, cmd.vkdev))
        fp32 = opt.copy()
        fp32.use_fp16_storage = False  # the extents stay fp32 whatever the tensors use
        half_gpu = cmd.record_upload(np.ascontiguousarray(half, np.float32), fp32)
        scalar = storage_elemsize(opt, cmd.vkdev)
        allocator = cmd.blob_allocator(opt)
        if mxnet:  # (4 * count,): as a 1-D blob, pack4 holds the same bytes as pack1
            ep = 4 if opt.use_packing_layout else 1
            top = VkMat.create(4 * count // ep, dims=1, elemsize=scalar * ep, elempack=ep, allocator=allocator)
        else:
            top = VkMat.create(4 * count, 2, dims=2, elemsize=scalar, elempack=1, allocator=allocator)
        cmd.record_pipeline(self.pipelines[int(mxnet)], [half_gpu, top],
                            [w, h, num_prior, 1 if self.clip else 0, float(start_x), float(start_y),
                             float(step_w), float(step_h), float(image_w), float(image_h)]
                            + [float(v) for v in self.variances],
                            rows.flat_dispatch(count))
        half_gpu.release()
        return [top]


def _shape_wh(shape: tuple) -> tuple[int, int]:
    """_wh from a numpy shape (the GPU path sees shapes, not arrays)."""
    return int(shape[-1]), int(shape[-2]) if len(shape) >= 2 else 1
