"""Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions on the GPU.

A 3x3 convolution computes each 2x2 block of outputs from a 4x4 input patch with 36
multiply-adds per channel pair; Winograd's minimal filtering does it with 16:

    Y = A^T [ (G g G^T) * (B^T d B) ] A

where * is elementwise over the 4x4 "frequencies". Summed over input channels, each
frequency is an ordinary matrix product, so a layer becomes three dispatches:

1. shaders/winograd23_input.comp: every 4x4 patch (tile) of every input channel to its
   16 frequencies, V, laid out as 16 planes of the input's channels over the tiles;
2. the 16 products U[f] @ V[f] (outc x inc times inc x tiles) as ONE grouped 1x1
   convolution (groups = frequencies) through record_conv, judged as one batch, so the
   products run on the tensor cores where the device has them, else the tiled kernel
   (with split-K where the tiles are too few);
3. shaders/winograd23_output.comp: the 16 products of each tile back to its 2x2 outputs,
   with bias, the folded residual and the activation.

The transformed weights U = G g G^T are made and uploaded when a plan first takes this
path for the layer (`winograd_product`), into the allocator that holds the layer's other
weights: layers that never take it (small products) hold no second copy.
F(2, 3) uses the points 0, +-1 and infinity: every transform coefficient is 0, +-1 or
+-1/2, so the extra rounding (V and the products are stored at the tensors' precision)
stays small; F(4, 3) would save more multiplies but multiplies the rounding with
coefficients up to 8.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .layer_pipelines import cached_pipeline, parallel_target, plane_local_size, storage_is_fp16
from .vkmat import VkMat

# the filter transform of F(2, 3) (Lavin & Gray): U = G g G^T
FILTER_TRANSFORM = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
FREQUENCIES = 16
WINOGRAD_MIN_MACS = 1 << 28


def winograd_weights(weight: np.ndarray, outc: int, inc: int) -> np.ndarray:
    """(outc, inc, 3, 3) weights -> U as (16, outc, inc) float32: frequency f's matrix, in
    the [group][outc][k] order the grouped 1x1 product reads (f = 4 i + j)."""
    g = np.asarray(weight, np.float32).reshape(outc * inc, 3, 3)
    transform = FILTER_TRANSFORM.astype(np.float32)   # exact: entries 0, +-1/2, 1
    u = np.matmul(transform, g @ transform.T)          # (outc*inc, 4, 4): two batched products
    return np.ascontiguousarray(u.reshape(outc, inc, FREQUENCIES).transpose(2, 0, 1))


class WinogradProduct:
    """Step 2 as record_conv sees a layer: a grouped 1x1 convolution with the transformed
    weights, no bias, no activation, and its own pipelines."""

    type = "Convolution (Winograd product)"
    group = FREQUENCIES
    activation_type = 0
    activation_params = None
    bias_gpu = None

    def __init__(self, vkdev, weight_gpu) -> None:
        self.vkdev = vkdev
        self.weight_gpu = weight_gpu


def winograd_product(layer, vkdev) -> WinogradProduct:
    """The layer's WinogradProduct, its weights transformed and uploaded on first use (one
    transfer, into layer.winograd_allocator, at the storage precision of layer.weight_gpu)."""
    from .command import VkTransfer

    if layer.winograd_product is None:
        u = winograd_weights(layer.weight_mat, layer.num_output, layer.num_input_g)
        precision = SimpleNamespace(use_fp16_storage=layer.weight_gpu.scalar_size() == 2)
        transfer = VkTransfer(vkdev)
        try:
            weight_gpu = transfer.record_upload(u.reshape(-1), precision, allocator=layer.winograd_allocator)
            transfer.submit_and_wait()
        finally:
            transfer.release()
        layer.winograd_product = WinogradProduct(vkdev, weight_gpu)
    return layer.winograd_product


def winograd_shape_ok(kernel_hw, stride_hw, dilation_hw, group: int, inc: int, outc: int) -> bool:
    """Whether a convolution has the shape this path computes: 3x3, stride 1, dilation 1,
    one group, whole pack4 items of input and output channels."""
    return (tuple(kernel_hw) == (3, 3) and tuple(stride_hw) == (1, 1) and tuple(dilation_hw) == (1, 1)
            and group == 1 and inc % 4 == 0 and outc % 4 == 0)


def winograd_device(vkdev) -> bool:
    """Whether the device takes this path at all: GPUs do; a CPU implementation (lavapipe)
    keeps the kernels its tuning was made for (and holds no second copy of the weights)."""
    return parallel_target(vkdev) > 1


def use_winograd(vkdev, m: int, n: int, k: int) -> bool:
    """For an eligible layer (m outputs, n pixels, k = 9 inc), whether to take this path:
    for products of at least WINOGRAD_MIN_MACS multiply-adds (below that the two extra
    dispatches cost more than the multiplies saved)."""
    return winograd_device(vkdev) and m * n * k >= WINOGRAD_MIN_MACS


def record_winograd(layer, cmd, opt, x, plane, shape, geometry, bias, act, residual) -> VkMat:
    """Record the three dispatches for `layer` (one with a `winograd_allocator`); `x` is a
    pack4 (inc, h, w) input, `shape` the output's (outc, outh, outw). Returns the pack4 output."""
    from .conv import ConvGeometry, Plane, record_conv

    outc, outh, outw = shape
    inc = plane.channels
    tiles_h, tiles_w = -(-outh // 2), -(-outw // 2)
    fp16 = storage_is_fp16(x)
    allocator = cmd.blob_allocator(opt)
    v = VkMat.for_numpy_shape((FREQUENCIES * inc, tiles_h, tiles_w), 4, x.scalar_size(), allocator)
    specs = [plane.w, plane.h, plane.cstep, inc // 4, tiles_w, tiles_h, v.cstep,
             geometry.pad_top, geometry.pad_left, geometry.pad_value]
    pipeline = cached_pipeline(layer, "winograd23_input", fp16, specs, plane_local_size(tiles_w, tiles_h, inc // 4))
    cmd.record_pipeline(pipeline, [x, v], [], (tiles_w, tiles_h, inc // 4))

    identity = ConvGeometry(1, 1, 1, 1, 1, 1, 0, 0)
    # judged as one batch: the kernel thresholds are per group, and 16 groups of a direct-
    # kernel size are a tensor-core size (H200, vgg16: 1.35 ms instead of 1.71 on the direct kernel)
    products = record_conv(winograd_product(layer, cmd.vkdev), cmd, opt, v,
                           Plane(FREQUENCIES * inc, tiles_h, tiles_w, v.cstep, 4),
                           (FREQUENCIES * outc, tiles_h, tiles_w), identity, "gemm", deconv=False,
                           batched=True)
    v.release()  # back to the pool: the recorder orders any reuse after these reads

    top = VkMat.for_numpy_shape(shape, 4, x.scalar_size(), allocator)
    specs = [int(bias is not None)] + act + [tiles_w, tiles_h, products.cstep, outc // 4, outw, outh, top.cstep,
                                             int(residual is not None)]
    pipeline = cached_pipeline(layer, "winograd23_output", fp16, specs, plane_local_size(tiles_w, tiles_h, outc // 4))
    cmd.record_pipeline(pipeline, [products, top, bias, residual], [], (tiles_w, tiles_h, outc // 4))
    products.release()
    return top

