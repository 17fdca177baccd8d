"""Sigmoid: y = 1 / (1 + exp(-x))."""

from vkncnn.cpu_fallback import activation
from vkncnn.gpu.ops import elementwise
from vkncnn.layer import register_layer
from vkncnn.layers.common.unary import ElementwiseBatch, UnaryLayer


@register_layer("Sigmoid")
class Sigmoid(ElementwiseBatch, UnaryLayer):
    gpu_op = elementwise.SIGMOID

    def forward_cpu(self, bottoms, opt):
        return [activation.sigmoid(bottoms[0])]
