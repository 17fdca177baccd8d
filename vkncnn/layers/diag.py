"""Diag (torch.diag): a 1-D blob becomes the square matrix with it on diagonal `diagonal`
(0, default 0; > 0 above the main one, < 0 below); a 2-D blob gives that diagonal as a
1-D blob, empty when the diagonal lies outside the matrix (as ncnn)."""

from vkncnn.cpu_fallback import tensor_ops
from vkncnn.errors import ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("Diag")
class Diag(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        self.diagonal = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim not in (1, 2):
            raise ShapeError(f"Diag {self.name!r} takes a 1-D or 2-D blob, got {x.ndim}-D {x.shape}")
        if x.ndim == 1:  # the square grows with the diagonal's offset, a param
            n = x.shape[0] + abs(self.diagonal)
            check_alloc(opt, (n, n), 4, "the diagonal matrix")
        return [tensor_ops.diag(x, self.diagonal)]
