"""ROIAlign (Mask R-CNN): bilinear samples averaged over pooled_h x pooled_w bins of one box.

Params: 0 pooled_width 0, 1 pooled_height 0, 2 spatial_scale 1.0, 3 sampling_ratio 0
(0 = adaptive: ceil of the bin size), 4 aligned 0 (shift the box by -0.5 pixel),
5 version 0 (0 ncnn's original, 1 detectron2's). Bottoms: features (c, h, w) and the
ROI [x1, y1, x2, y2].
"""

import math

from vkncnn.cpu_fallback import roi
from vkncnn.errors import ParamError
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.roi import check_inputs, check_pooled, feature_planes, roi_box
from vkncnn.memory_budget import check_alloc


@register_layer("ROIAlign")
class ROIAlign(Layer):
    def load_param(self, pd) -> int:
        self.pooled_width = pd.get(0, 0)
        self.pooled_height = pd.get(1, 0)
        self.spatial_scale = pd.get(2, 1.0)
        self.sampling_ratio = pd.get(3, 0)
        self.aligned = pd.get(4, 0)
        self.version = pd.get(5, 0)
        check_pooled(self, self.pooled_width, self.pooled_height)
        if self.version not in (0, 1):
            raise ParamError(f"ROIAlign {self.name!r}: version (param 5) must be 0 (ncnn) or 1 (detectron2), "
                             f"got {self.version}")
        if self.sampling_ratio > 1024:
            raise ParamError(f"ROIAlign {self.name!r}: sampling_ratio (param 3) {self.sampling_ratio} is beyond "
                             f"any sane sample grid (at most 1024)")
        return 0

    def forward_cpu(self, bottoms, opt):
        check_inputs(self, bottoms)
        x = feature_planes(self, bottoms[0])
        box = roi_box(self, bottoms[1])
        self._check_budget(opt, x.shape, box)
        return [roi.roi_align(x, box, self.pooled_width, self.pooled_height,
                              self.spatial_scale, self.sampling_ratio, bool(self.aligned), self.version)]

    def _check_budget(self, opt, shape: tuple, box) -> None:
        """roi.roi_align's buffers: float64 sums per bin, and per axis a grid of samples per bin
        and a (bins, pixels) float64 weight matrix. The bin counts are params; an adaptive
        detectron2 grid also grows with the box, i.e. the ROI input's values."""
        c, h, w = shape
        check_alloc(opt, (c, self.pooled_height, self.pooled_width), 8, "the pooled sums")
        for pooled, size, lo, hi in ((self.pooled_height, h, box[1], box[3]), (self.pooled_width, w, box[0], box[2])):
            if self.sampling_ratio > 0:
                grid = self.sampling_ratio
            elif self.version == 0:
                grid = size + 1  # bins are clipped to the image
            else:
                extent = abs(float(hi) - float(lo)) * abs(float(self.spatial_scale))
                if not math.isfinite(extent):
                    continue  # the kernel refuses a box without a size
                grid = math.ceil(extent / pooled) + 1
            check_alloc(opt, (pooled, grid), 4, "the sample grid")
            check_alloc(opt, (pooled, size), 8, "the sample weights")
