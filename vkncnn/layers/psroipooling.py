"""PSROIPooling (R-FCN): position-sensitive average pooling of one box.

Params: 0 pooled_width 7, 1 pooled_height 7, 2 spatial_scale 0.0625, 3 output_dim 0.
Bottoms: features with output_dim * pooled_h * pooled_w channels, and the ROI
[x1, y1, x2, y2]. Output bin (q, ph, pw) averages channel (q*pooled_h + ph)*pooled_w + pw.
"""

from vkncnn.cpu_fallback import roi
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.roi import check_inputs, check_pooled, feature_planes, roi_box


@register_layer("PSROIPooling")
class PSROIPooling(Layer):
    def load_param(self, pd) -> int:
        self.pooled_width = pd.get(0, 7)
        self.pooled_height = pd.get(1, 7)
        self.spatial_scale = pd.get(2, 0.0625)
        self.output_dim = pd.get(3, 0)
        check_pooled(self, self.pooled_width, self.pooled_height)
        if self.output_dim <= 0:
            raise ParamError(f"PSROIPooling {self.name!r}: output_dim (param 3) must be > 0, got {self.output_dim}")
        return 0

    def forward_cpu(self, bottoms, opt):
        check_inputs(self, bottoms)
        x = feature_planes(self, bottoms[0])
        need = self.output_dim * self.pooled_height * self.pooled_width
        if x.shape[0] != need:
            raise ShapeError(f"PSROIPooling {self.name!r}: features need output_dim x pooled_h x pooled_w = "
                             f"{need} channels, got {x.shape[0]} (shape {bottoms[0].shape})")
        return [roi.psroi_pool(x, roi_box(self, bottoms[1]), self.pooled_width, self.pooled_height,
                               self.spatial_scale, self.output_dim)]
