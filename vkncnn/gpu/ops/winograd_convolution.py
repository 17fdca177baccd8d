"""Winograd F(2x2, 3x3) and F(4x4, 3x3) for 3x3 stride-1 convolutions on the GPU.

A 3x3 convolution computes each FxF block of outputs from a TxT input patch (T = F + 2);
Winograd's minimal filtering does it with T*T multiply-adds per channel pair instead of
9 F^2 (F(2, 3): 16 instead of 36; F(4, 3): 36 instead of 144):

    Y = A^T [ (G g G^T) * (B^T d B) ] A

where * is elementwise over the TxT "frequencies". Summed over input channels, each
frequency is an ordinary matrix product, so a layer becomes three dispatches:

1. shaders/winograd_input.comp: every TxT patch (tile) of every input channel to its
   T*T frequencies, V, laid out as T*T planes of the input's channels over the tiles;
2. the T*T products U[f] @ V[f] (outc x inc times inc x tiles): on devices with tensor
   cores (fp16 storage, channels multiples of 16) shaders/winograd_products.comp, with V
   and the products laid out channels-last so that every 16x16 block of every operand is
   one strided matrix the tensor cores load straight from memory; elsewhere ONE grouped
   1x1 convolution (groups = frequencies) through record_conv, judged as one batch (the
   tiled kernel, with split-K where the tiles are too few);
3. shaders/winograd_output.comp: the T*T products of each tile back to its FxF outputs,
   with bias, the folded residual and the activation.

F(4, 3) has a quarter of F(2, 3)'s tiles for 36/16 of the frequencies: 0.56x the
products' work and of V's memory, which wins on large images; on small ones (VGG's 14x14
conv5 layers: 16 tiles against 49) the products are too few tiles wide either way and
F(2, 3) needs fewer of them (choose_tile). F(2, 3)'s transform coefficients are 0, +-1
and +-1/2; F(4, 3)'s, on the points 0, +-sqrt 2, +-1/sqrt 2 and infinity that ncnn's
Vulkan winograd43 path takes, reach 5/2 (input) and 2 sqrt 2 (output), so with fp16 storage
its rounding is still larger (the points 0, +-1, +-2, with coefficients of 5 and 8, rounded
4-5x more than ncnn's on fuzzed 96-channel layers).

The transformed weights U = G g G^T are made and uploaded when a plan first takes the
path for the layer (`winograd_product`), into the allocator that holds the layer's other
weights: layers that never take it (small products) hold no second copy.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..vulkan.command import VkTransfer
from ..vulkan.pipeline import shader_pipeline
from ..vulkan.vkmat import VkMat
from .conv_geometry import ConvGeometry, Plane
from .dispatch_options import parallel_target, plane_local_size, storage_is_fp16
from .matrix_product import tensor_core_device

# the filter transforms G (T x 3) of F(2, 3) (Lavin & Gray) and F(4, 3) (points 0, +-sqrt 2,
# +-1/sqrt 2, infinity, as ncnn's Vulkan winograd43): U = G g G^T
FILTER_TRANSFORMS = {
    2: np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
    4: np.array([[1, 0, 0], [-2 / 3, -np.sqrt(2) / 3, -1 / 3], [-2 / 3, np.sqrt(2) / 3, -1 / 3],
                 [1 / 6, np.sqrt(2) / 6, 1 / 3], [1 / 6, -np.sqrt(2) / 6, 1 / 3], [0, 0, 1]]),
}
WINOGRAD_MIN_MACS = 1 << 28
PRODUCT_TILE = 64  # pixels (here: tiles) per workgroup of the products' kernel, as choose_tile counts


def frequencies(f: int) -> int:
    return (f + 2) ** 2


def winograd_weights(weight: np.ndarray, outc: int, inc: int, f: int = 2) -> np.ndarray:
    """(outc, inc, 3, 3) weights -> U as (T*T, outc, inc) float32: frequency i*T + j's
    matrix, in the [group][outc][k] order the grouped 1x1 product reads."""
    g = np.asarray(weight, np.float64).reshape(outc * inc, 3, 3)
    transform = FILTER_TRANSFORMS[f]
    u = np.matmul(transform, g @ transform.T)          # (outc*inc, T, T): two batched products
    return np.ascontiguousarray(u.reshape(outc, inc, frequencies(f)).transpose(2, 0, 1), np.float32)


def choose_tile(opt, outh: int, outw: int) -> int:
    """F (2 or 4) for an output of outh x outw, or 0 for no Winograd (the Option turns
    both off): the one whose products need fewer workgroup columns (frequencies times
    runs of PRODUCT_TILE tiles), F(2, 3) on a tie (its rounding is smaller). On vgg16 this
    per-layer choice beat F(4, 3) everywhere, F(2, 3) everywhere and no Winograd on the
    14x14 layers, with fp16 and fp32 storage alike (figures: docs/perf-notes.md, "GPU
    Winograd: F(2, 3) or F(4, 3)")."""
    allowed = [f for f, flag in ((2, "use_winograd23_convolution"), (4, "use_winograd43_convolution"))
               if getattr(opt, flag, True)]
    if not getattr(opt, "use_winograd_convolution", True) or not allowed:
        return 0

    def columns(f):
        return frequencies(f) * -(-(-(-outh // f) * -(-outw // f)) // PRODUCT_TILE)
    return min(allowed, key=lambda f: (columns(f), f))


class WinogradProduct:
    """Step 2 as record_conv sees a layer: a grouped 1x1 convolution with the transformed
    weights, no bias, no activation, and its own pipelines."""

    activation_type = 0
    activation_params = None
    bias_gpu = None

    def __init__(self, vkdev, weight_gpu, f: int) -> None:
        self.vkdev = vkdev
        self.weight_gpu = weight_gpu
        self.type = f"Convolution (Winograd F({f}, 3) product)"
        self.group = frequencies(f)


def winograd_product(layer, vkdev, f: int) -> WinogradProduct:
    """The layer's WinogradProduct for F(f, 3), its weights transformed and uploaded on first
    use (one transfer, into layer.winograd_allocator, at the storage precision of
    layer.weight_gpu)."""
    if f not in layer.winograd_products:
        u = winograd_weights(layer.weight_mat, layer.num_output, layer.num_input_g, f)
        precision = SimpleNamespace(use_fp16_storage=layer.weight_gpu.scalar_size() == 2)
        transfer = VkTransfer(vkdev)
        try:
            weight_gpu = transfer.record_upload(u.reshape(-1), precision, allocator=layer.winograd_allocator)
            transfer.submit_and_wait()
        finally:
            transfer.release()
        layer.winograd_products[f] = WinogradProduct(vkdev, weight_gpu, f)
    return layer.winograd_products[f]


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


def channels_last_products(vkdev, fp16: bool, inc: int, outc: int, allowed: bool = True) -> bool:
    """Whether the layer takes the channels-last layout, whose products run in
    winograd_products.comp: where that runs on the tensor cores (tensor_core_products).
    Against the grouped convolution it made vgg16 faster and left the other large models
    unchanged (figures: docs/perf-notes.md, "GPU Winograd: channels-last products on
    tensor cores")."""
    return tensor_core_products(vkdev, fp16, inc, outc, allowed)


def tensor_core_products(vkdev, fp16: bool, inc: int, outc: int, allowed: bool = True) -> bool:
    """fp16 storage on a tensor-core device (gemm.tensor_core_device, VKNCNN_COOPMAT=0 included),
    and channel counts that are multiples of 16 (whole fragments)."""
    return fp16 and inc % 16 == 0 and outc % 16 == 0 and tensor_core_device(vkdev, allowed)


def record_winograd(layer, cmd, opt, x, plane, shape, geometry, bias, act, residual, f: int,
                    record_conv) -> VkMat:
    """Record the three dispatches of F(f, 3) for `layer` (one with a `winograd_allocator`);
    `x` is a pack4 (inc, h, w) input, `shape` the output's (outc, outh, outw). Returns the
    pack4 output.

    `record_conv` is convolution.record_conv, the caller, handed in rather than imported
    (that module imports this one): step 2's grouped 1x1 product is recorded through it."""
    outc, outh, outw = shape
    inc = plane.channels
    tiles_h, tiles_w = -(-outh // f), -(-outw // f)
    fp16 = storage_is_fp16(x)
    channels_last = channels_last_products(cmd.vkdev, fp16, inc, outc, cmd.use_cooperative_matrix)
    steps = _ChannelsLastSteps(layer, cmd, opt, x, f, tiles_h * tiles_w, inc, outc) if channels_last else \
        _GroupedConvSteps(layer, cmd, opt, x, f, tiles_h, tiles_w, inc, outc, record_conv)

    defines = {"F": f, "CHANNELS_LAST": int(channels_last)}
    grid = (inc // 4, tiles_w, tiles_h) if channels_last else (tiles_w, tiles_h, inc // 4)
    specs = [plane.w, plane.h, plane.cstep, inc // 4, tiles_w, tiles_h, steps.v_cstep,
             geometry.pad_top, geometry.pad_left, geometry.pad_value]
    pipeline = shader_pipeline(layer.vkdev, "winograd_input", fp16, specs, plane_local_size(*grid), defines)
    cmd.record_pipeline(pipeline, [x, steps.v], [], grid)

    products, products_cstep = steps.record_products()
    steps.v.release()  # back to the pool: the recorder orders any reuse after these reads

    top = VkMat.for_numpy_shape(shape, 4, x.scalar_size(), cmd.blob_allocator(opt))
    grid = (outc // 4, tiles_w, tiles_h) if channels_last else (tiles_w, tiles_h, outc // 4)
    specs = [int(bias is not None)] + act + [tiles_w, tiles_h, products_cstep, outc // 4, outw, outh, top.cstep,
                                             int(residual is not None)]
    pipeline = shader_pipeline(layer.vkdev, "winograd_output", fp16, specs, plane_local_size(*grid), defines)
    cmd.record_pipeline(pipeline, [products, top, bias, residual], [], grid)
    products.release()
    return top


class _GroupedConvSteps:
    """V in T*T pack4 planes of the input's channels over the tiles; the products as one
    grouped 1x1 convolution through record_conv."""

    def __init__(self, layer, cmd, opt, x, f, tiles_h, tiles_w, inc, outc, record_conv) -> None:
        self.layer, self.cmd, self.opt, self.f = layer, cmd, opt, f
        self.record_conv = record_conv
        self.tiles_h, self.tiles_w, self.inc, self.outc = tiles_h, tiles_w, inc, outc
        self.v = VkMat.for_numpy_shape((frequencies(f) * inc, tiles_h, tiles_w), 4, x.scalar_size(),
                                       cmd.blob_allocator(opt))
        self.v_cstep = self.v.cstep

    def record_products(self) -> tuple[VkMat, int]:
        planes = frequencies(self.f)
        identity = ConvGeometry(1, 1, 1, 1, 1, 1, 0, 0)
        # judged as one batch: the kernel thresholds are per group, and 16 or 36 groups of a
        # direct-kernel size are a tensor-core size, where the batch runs faster than on the
        # direct kernel (figures: docs/perf-notes.md, "GPU Winograd: the grouped product
        # judged as one batch")
        product = winograd_product(self.layer, self.cmd.vkdev, self.f)
        products = self.record_conv(product, self.cmd, self.opt, self.v,
                                    Plane(planes * self.inc, self.tiles_h, self.tiles_w, self.v_cstep, 4),
                                    (planes * self.outc, self.tiles_h, self.tiles_w), identity, "gemm", deconv=False,
                                    batched=True)
        return products, products.cstep


class _ChannelsLastSteps:
    """V as [frequency][tile][channel] and the products as [frequency][tile][output
    channel], the tiles padded to a multiple of 16; the products in
    shaders/winograd_products.comp."""

    def __init__(self, layer, cmd, opt, x, f, tiles, inc, outc) -> None:
        self.layer, self.cmd, self.opt, self.f = layer, cmd, opt, f
        self.inc, self.outc = inc, outc
        self.fp16 = storage_is_fp16(x)
        self.elemsize = 4 * x.scalar_size()
        self.v_cstep = -(-tiles // 16) * 16
        self.v = VkMat.create(frequencies(f) * self.v_cstep * (inc // 4), dims=1, elemsize=self.elemsize,
                              elempack=4, allocator=cmd.blob_allocator(opt))

    def record_products(self) -> tuple[VkMat, int]:
        planes, n = frequencies(self.f), self.v_cstep
        cmd = self.cmd
        products = VkMat.create(planes * n * (self.outc // 4), dims=1, elemsize=self.elemsize, elempack=4,
                                allocator=cmd.blob_allocator(self.opt))
        weight = winograd_product(self.layer, cmd.vkdev, self.f).weight_gpu
        specs = [self.outc, self.inc, n]
        if tensor_core_products(cmd.vkdev, self.fp16, self.inc, self.outc, cmd.use_cooperative_matrix):
            pipeline = shader_pipeline(cmd.vkdev, "winograd_products", self.fp16, specs, (128, 1, 1), {"COOPMAT": 1})
            grid = (-(-n // 64) * 128, -(-self.outc // 64), planes)
        else:  # the scalar form of the same contract (what the tests run on other devices)
            grid = (n, self.outc // 4, planes)
            pipeline = shader_pipeline(cmd.vkdev, "winograd_products", self.fp16, specs, plane_local_size(*grid),
                                       {"COOPMAT": 0})
        cmd.record_pipeline(pipeline, [weight, self.v, products], [], grid)
        return products, n
