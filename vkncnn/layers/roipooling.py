"""ROIPooling (Fast R-CNN): max pooling of one box into pooled_h x pooled_w bins.

Params: 0 pooled_width 0, 1 pooled_height 0, 2 spatial_scale 1.0. Bottoms: features
(c, h, w) and the ROI [x1, y1, x2, y2]. The box corners are scaled and rounded to
pixels (C round, halves away from zero); bins are floor/ceil cuts of it.
"""

from vkncnn.cpu_fallback import roi
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.roi import check_inputs, check_pooled, feature_planes, roi_box
from vkncnn.memory_budget import check_alloc


@register_layer("ROIPooling")
class ROIPooling(Layer):
    def load_param(self, pd) -> int:
        self.pooled_width = pd.get(0, 0)
        self.pooled_height = pd.get(1, 0)
        self.spatial_scale = pd.get(2, 1.0)
        check_pooled(self, self.pooled_width, self.pooled_height)
        return 0

    def forward_cpu(self, bottoms, opt):
        check_inputs(self, bottoms)
        x = feature_planes(self, bottoms[0])
        # bins are params: the output and the per-column maxima (c, h, pooled_w)
        check_alloc(opt, (x.shape[0], self.pooled_height, self.pooled_width), 4, "the output")
        check_alloc(opt, (x.shape[0], x.shape[1], self.pooled_width), 4, "the column maxima")
        return [roi.roi_max_pool(x, roi_box(self, bottoms[1]), self.pooled_width, self.pooled_height,
                                 self.spatial_scale)]
