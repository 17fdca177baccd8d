"""Softmax: exp(x - max) / sum(exp(x - max)) along one axis.

axis is a numpy axis of the blob ((c, d, h, w) order), negatives count from the end.
fixbug0 must be 1 for any axis other than 0: ncnn refuses older params, whose
axis meant something else on 3-D blobs. ncnn quirks kept: a 1-D blob ignores
axis, and an axis outside the blob's dims leaves it unchanged.
"""

from vkncnn.cpu_fallback import norm
from vkncnn.errors import ParamError
from vkncnn.layer import Layer, register_layer


@register_layer("Softmax")
class Softmax(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = True

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
