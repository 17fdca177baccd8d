"""Recording the convolution family on the GPU: Convolution, ConvolutionDepthWise,
Deconvolution, DeconvolutionDepthWise and the 1-D layers (Convolution1D,
ConvolutionDepthWise1D, Deconvolution1D, DeconvolutionDepthWise1D: one-row planes) all
come here, and the shape of the product picks the shader (conv_path, use_tensor_cores)."""

from __future__ import annotations

import numpy as np

from ...errors import GpuError, ShapeError
from ...log import log_kernel
from ..vulkan.pipeline import shader_pipeline
from ..vulkan.vkmat import VkMat
from .conv_geometry import ConvGeometry, Plane
from .dispatch_options import (
    activation_specs,
    arithmetic_fp16,
    as_pack1,
    out_elempack,
    parallel_target,
    plane_local_size,
    pow2_ceil,
    storage_is_fp16,
    workgroup_cap,
)
from .matrix_product import gemm_tile, tensor_core_device
from .winograd_convolution import choose_tile, record_winograd, use_winograd


def check_weight_storage(layer, x) -> None:
    # an empty blob holds no scalars, so its precision says nothing (an empty upload keeps
    # fp32 whatever the storage): the layer's shape checks, which follow, judge it
    if x.total() == 0:
        return
    weight = layer.weight_gpu
    if weight.scalar_size() != x.scalar_size():
        raise GpuError(f"{layer.type}: weights were uploaded with {weight.scalar_size()}-byte scalars but the "
                       f"input has {x.scalar_size()}-byte ones (use_fp16_storage changed after load_model?)")


def upload_conv_weights(layer, cmd, opt, path: str, taps: int, taps_first: bool) -> tuple:
    """(weight, bias) on the device: layer.weight_mat and layer.bias_data (bias None when the
    layer has none) as the shader of `path` (conv_path) reads them: [tap][channel] for
    depthwise, [g][oc][ic][tap] for "grouped" (ncnn's own order),
    [g][oc][tap][ic] for the matrix product ("gemm"). weight_mat holds [g][oc][ic][tap]
    for convolutions and [g][oc][tap][ic] (`taps_first`) for transposed convolutions."""
    if path == "depthwise":
        weight = layer.weight_mat.reshape(layer.group, taps).T
    else:
        outc_g = layer.num_output // layer.group
        shape = (layer.group, outc_g, taps, -1) if taps_first else (layer.group, outc_g, -1, taps)
        weight = layer.weight_mat.reshape(shape)
        if (path == "grouped") == taps_first:  # the two orders differ: swap taps and channels
            weight = weight.transpose(0, 1, 3, 2)
    bias = cmd.record_upload(layer.bias_data, opt) if layer.bias_data is not None else None
    return cmd.record_upload(np.ascontiguousarray(weight).reshape(-1), opt), bias


def conv_input_planes(x, cmd, opt, flat: bool, type_name: str):
    """(tensor, Plane) reading `x` as ncnn's convolutions do: 1-D is one row (or, for
    `flat`, a column of channels), 2-D one channel, 4-D with depth 1 its (c, h, w) plane."""
    if x.dims == 1:
        n = x.w * x.elempack  # a 1-D tensor is the same bytes in either packing
        return x, (Plane(n, 1, 1, 1, 1) if flat else Plane(1, 1, n, n, 1))
    if x.dims == 2:
        x = as_pack1(x, cmd, opt)
        return x, Plane(1, x.h, x.w, x.w * x.h, 1)
    if x.dims == 4 and x.d != 1:
        raise ShapeError(f"{type_name} takes (c, h, w) input; got 4-D {x.numpy_shape()} with depth > 1 "
                         "(use Convolution3D)")
    return x, Plane(x.c * x.elempack, x.h, x.w, x.w * x.h, x.elempack)


def sequence_input_planes(x, type_name: str):
    """(tensor, Plane) reading `x` as the 1-D convolutions do: a (channels, length) blob as
    `channels` planes of 1 x length. A 1-D blob is one channel; a (1, h, w) blob is the
    same memory as (h, w) and becomes that 2-D view, so that a later repack (the depthwise
    path packs input like output) packs its rows, not its single channel."""
    shape = x.numpy_shape()
    if x.dims == 1:
        return x, Plane(1, 1, shape[0], shape[0], 1)  # the same bytes in either packing
    if x.dims == 3 and shape[0] == 1:
        x = x.reshape(shape[2], shape[1], dims=2)  # c == 1: elempack 1, rows contiguous
        shape = shape[1:]
    if x.dims != 2:
        raise ShapeError(f"{type_name} takes (channels, length) input, got {x.dims}-D {shape}")
    return x, Plane(shape[0], 1, shape[1], shape[1], x.elempack)


def conv_path(inc_g: int, outc_g: int, group: int) -> str:
    """Which shader a (transposed) convolution takes:

    'depthwise'  one input and one output channel per group: convolutiondepthwise.comp;
    'grouped'    a few channels per group (a channel multiplier, 2 -> 1 upsampling): the same
                 direct loop over inc_g channels (GROUPED=1), where a matrix product's tile
                 of >= 4 output channels would mostly be padding;
    'gemm'       everything else: convolution.comp, one matrix product per group.
    """
    if inc_g == 1 and outc_g == 1:
        return "depthwise"
    if group > 1 and outc_g < 16 and inc_g <= 16:
        return "grouped"
    return "gemm"


# Storage buffers per shader stage: the tiled kernel binds 6 (bottom, top, weight, bias, the
# split-K workspace, the residual), the direct kernel 5 (no workspace). Their BINDINGS=4
# variants bind bottom, top, weight and bias only, for devices that offer no more (the
# Android baselines guarantee 4): no split-K and no folded residual there.
TILED_BINDINGS, DIRECT_BINDINGS, LEAN_BINDINGS = 6, 5, 4


def storage_buffers(vkdev) -> int:
    """maxPerStageDescriptorStorageBuffers as the device (or its profile) reports it."""
    return vkdev.info.max_per_stage_storage_buffers()


def residual_fits(vkdev) -> bool:
    """Can every convolution kernel take a folded residual here (accepts_residual)? Not on
    devices with fewer storage buffers than the tiled kernel's 6: the Eltwise sum then runs
    as its own dispatch."""
    return storage_buffers(vkdev) >= TILED_BINDINGS


def record_conv(layer, cmd, opt, x, plane: Plane, shape: tuple, geometry: ConvGeometry, path: str,
                deconv: bool, residual=None, activation=None, batched: bool = False):
    """Record one convolution-family dispatch; returns the output VkMat of numpy `shape`.

    `shape` is (num_output, outh, outw), (num_output, outw) for Convolution1D or
    (num_output,) for the flat 1x1 path; the packing axis is num_output either way.
    `residual`: a VkMat of that shape added before the activation (path "gemm" only);
    `activation`: (type, p0, p1) instead of the layer's own. A 3x3 stride-1 layer may take
    the Winograd path (gpu/ops/winograd_convolution.py), whose products come back here `batched`: groups
    that are one batch of products, judged as a whole when picking the kernel.
    """
    num_output = shape[0]
    outh, outw = (shape[1], shape[2]) if len(shape) == 3 else (1, shape[-1] if len(shape) == 2 else 1)
    ep = out_elempack(num_output, opt)
    buffers = storage_buffers(cmd.vkdev)
    if residual is not None:
        if path != "gemm" or deconv:
            raise GpuError(f"{layer.type}: a residual input needs the matrix-product path, not {path!r}")
        if buffers < TILED_BINDINGS:
            raise GpuError(f"{layer.type}: a folded residual needs {TILED_BINDINGS} storage buffers per shader "
                           f"stage, the device offers {buffers} (accepts_residual should have said no)")
        if tuple(residual.numpy_shape()) != tuple(shape):
            raise ShapeError(f"Eltwise inputs must share one shape, got {[tuple(shape), residual.numpy_shape()]}")
        if residual.elempack != ep:
            residual = cmd.vkdev.convert_packing(residual, ep, cmd, opt)
    has_residual = int(residual is not None)
    fp16 = storage_is_fp16(x)
    arith = arithmetic_fp16(opt, fp16)  # the cooperative-matrix kernels and the split-K reduce keep theirs
    act = list(activation) if activation is not None else activation_specs(layer.activation_type,
                                                                           layer.activation_params)
    bias = layer.bias_gpu
    group = layer.group
    inc_g, m, n = plane.channels // group, num_output // group, outw * outh
    k = inc_g * geometry.kernel_w * geometry.kernel_h
    if (path == "gemm" and not deconv and getattr(layer, "winograd_allocator", None) is not None
            and plane.elempack == 4 and ep == 4 and len(shape) == 3 and use_winograd(cmd.vkdev, m, n, k)):
        f = choose_tile(opt, outh, outw)
        if f:
            log_kernel(layer, f"Winograd F({f}, 3)", f"3x3 stride 1, a {m}x{n}x{k} product large enough to pay off")
            return record_winograd(layer, cmd, opt, x, plane, shape, geometry, bias, act, residual, f, record_conv)
    direct = None
    if (not batched and path == "gemm" and not deconv and plane.elempack == 4 and ep == 4 and inc_g % 4 == 0
            and m % 4 == 0):
        direct = direct_launch(cmd.vkdev, group, m, n, k)
    if direct is not None:
        px, lx, lz, workgroups = direct
        top = VkMat.for_numpy_shape(shape, ep, x.scalar_size(), cmd.blob_allocator(opt))
        specs = geometry.specs() + [int(bias is not None)] + act + [
            plane.w, plane.h, plane.cstep, outw, outh, n, inc_g, m,
            geometry.pad_top, geometry.pad_left, geometry.pad_value, has_residual]
        lean = buffers < DIRECT_BINDINGS
        log_kernel(layer, "convolution_direct", f"{m}x{n}x{k} product small enough for the direct loop"
                   + (f", {LEAN_BINDINGS} storage buffers" if lean else ""))
        pipeline = shader_pipeline(layer.vkdev, "convolution_direct", fp16, specs, (lx, 1, lz),
                                   {"PX": px, "BINDINGS": LEAN_BINDINGS if lean else DIRECT_BINDINGS},
                                   fp16_arithmetic=arith)
        grid = (workgroups[0] * lx, workgroups[1], workgroups[2] * lz)
        bindings = [x, top, layer.weight_gpu, bias] + ([] if lean else [residual])
        cmd.record_pipeline(pipeline, bindings, [], grid)
        return top
    if path == "grouped":
        log_kernel(layer, "convolutiondepthwise (grouped)", f"{group} groups of {inc_g} input channels")
        top = VkMat.for_numpy_shape(shape, ep, x.scalar_size(), cmd.blob_allocator(opt))
        specs = geometry.specs() + [int(bias is not None)] + act + [
            plane.w, plane.h, plane.cstep, outw, outh, outw * outh, num_output,
            geometry.pad_top, geometry.pad_left, geometry.pad_value,
            plane.channels // layer.group, num_output // layer.group, plane.elempack, ep]
        pipeline = shader_pipeline(layer.vkdev, "convolutiondepthwise", fp16, specs,
                                   plane_local_size(outw, outh, num_output),
                                   {"PACK4": 0, "DECONV": int(deconv), "GROUPED": 1}, fp16_arithmetic=arith)
        cmd.record_pipeline(pipeline, [x, top, layer.weight_gpu, bias], [], (outw, outh, num_output))
        return top
    if path == "depthwise":
        if plane.elempack != ep:  # depthwise keeps channels in place: input and output pack alike
            x = cmd.vkdev.convert_packing(x, ep, cmd, opt)
            plane = Plane(plane.channels, plane.h, plane.w, plane.cstep, ep)
        log_kernel(layer, "convolutiondepthwise", "one input channel per group")
        top = VkMat.for_numpy_shape(shape, ep, x.scalar_size(), cmd.blob_allocator(opt))
        items = num_output // ep
        specs = geometry.specs() + [int(bias is not None)] + act + [
            plane.w, plane.h, plane.cstep, outw, outh, outw * outh, items,
            geometry.pad_top, geometry.pad_left, geometry.pad_value]
        pipeline = shader_pipeline(layer.vkdev, "convolutiondepthwise", fp16, specs,
                                   plane_local_size(outw, outh, items),
                                   {"PACK4": int(ep == 4), "DECONV": int(deconv), "GROUPED": 0},
                                   fp16_arithmetic=arith)
        cmd.record_pipeline(pipeline, [x, top, layer.weight_gpu, bias], [], (outw, outh, items))
        return top
    top = VkMat.for_numpy_shape(shape, ep, x.scalar_size(), cmd.blob_allocator(opt))
    specs = geometry.specs() + [int(bias is not None)] + act + [
        plane.w, plane.h, plane.cstep, plane.elempack, outw, outh, n, ep,
        inc_g, m, geometry.pad_top, geometry.pad_left, geometry.pad_value]
    parallel = parallel_target(cmd.vkdev)
    products = group if batched else 1  # products judged together (their m*n*k summed)
    lean = buffers < TILED_BINDINGS
    if (not deconv and fp16 and plane.elempack == 4 and inc_g % 4 == 0 and not lean
            and use_tensor_cores(cmd.vkdev, m, n * products, k, cmd.use_cooperative_matrix)):
        tiles = -(-n // 64) * -(-m // 64) * group
        slices = split_k(tiles, k, parallel, min_slice=128)
        log_kernel(layer, "convolution_coopmat", f"cooperative matrices (tensor cores) on the fp16 {m}x{n}x{k} "
                   f"product, split-K {slices}")
        pipeline = shader_pipeline(layer.vkdev, "convolution_coopmat", fp16, specs + [slices, has_residual],
                                   (128, 1, 1))
        grid = (-(-n // 64) * 128, -(-m // 64), group * slices)
    else:
        lx, ly, tm = conv_tile(m, n, parallel, workgroup_cap(cmd.vkdev))
        tiles = -(-n // (4 * lx)) * -(-m // (tm * ly)) * group
        slices = 1 if lean else split_k(tiles, k, parallel)
        log_kernel(layer, "convolution (tiled)", f"{m}x{n}x{k} product, tile {lx}x{ly}x{tm}, split-K {slices}"
                   + (f", {LEAN_BINDINGS} storage buffers" if lean else ""))
        pipeline = shader_pipeline(layer.vkdev, "convolution", fp16, specs + [slices, has_residual], (lx, ly, 1),
                                   {"DECONV": int(deconv), "TM": tm,
                                    "BINDINGS": LEAN_BINDINGS if lean else TILED_BINDINGS}, fp16_arithmetic=arith)
        grid = (-(-n // (4 * lx)) * lx, -(-m // (tm * ly)) * ly, group * slices)
        if lean:
            cmd.record_pipeline(pipeline, [x, top, layer.weight_gpu, bias], [], grid)
            return top
    workspace = None
    if slices > 1:
        workspace = VkMat.create(slices * num_output * n, dims=1, elemsize=4, allocator=cmd.blob_allocator(opt))
    cmd.record_pipeline(pipeline, [x, top, layer.weight_gpu, bias, workspace, residual], [], grid)
    if workspace is not None:
        reduce = shader_pipeline(layer.vkdev, "convolution_reduce", fp16,
                                 [slices, int(bias is not None)] + act + [n, num_output, ep, has_residual],
                                 (64, 4, 1))
        cmd.record_pipeline(reduce, [workspace, top, bias, residual], [], (n, num_output, 1))
        workspace.release()  # back to the pool: the recorder orders any reuse after these reads
    return top


TENSOR_CORE_MIN_MACS = 1 << 25
DIRECT_MAX_MACS = 1 << 26


def use_direct_kernel(vkdev, m: int, n: int, k: int) -> bool:
    """convolution_direct.comp for this product (pack4 in and out, whole items per group)?

    On GPUs, for products below DIRECT_MAX_MACS multiply-adds: there the tiled kernels are
    bound by the latency of their K loop, not by arithmetic. The direct kernel made every
    model measured faster, the small nets most; a lower threshold was slower on resnet50
    and googlenet, and a higher one took resnet18's large 3x3 layers off the tensor cores
    and lost (figures: docs/perf-notes.md, "Direct convolution kernel: the threshold")."""
    return parallel_target(vkdev) > 1 and m * n * k < DIRECT_MAX_MACS


def direct_launch(vkdev, group: int, m: int, n: int, k: int):
    """(PX, lx, lz, workgroups) for convolution_direct.comp on this product, or None where the
    kernel is not the one to use (use_direct_kernel) or its grid exceeds the device's
    workgroup counts."""
    if not use_direct_kernel(vkdev, m, n, k):
        return None
    px, lx, lz = direct_tile(m // 4 * group, n, k // 4, parallel_target(vkdev), workgroup_cap(vkdev))
    workgroups = (-(-n // (lx * px)), m // 4, group)
    if any(g > limit for g, limit in zip(workgroups, vkdev.info.max_workgroup_count())):
        return None
    return px, lx, lz, workgroups


DIRECT_INVOCATIONS_PER_UNIT = 512
DIRECT_MAX_K_SPLIT = 32


def direct_tile(items: int, n: int, steps: int, parallel: int, cap: int = 256) -> tuple[int, int, int]:
    """(PX, lx, lz) for convolution_direct.comp: `items` output items (all groups), `n`
    pixels, `steps` = K / 4 loop steps. The aim is enough invocations to hide memory
    latency (parallel * DIRECT_INVOCATIONS_PER_UNIT of them): 4 pixels per invocation where
    that still leaves enough, else 2 (1 on tiny images), then the K loop split over up to
    DIRECT_MAX_K_SPLIT invocations of a workgroup while each keeps at least 4 steps.
    These values were faster than the earlier, smaller target and splits on every model
    measured but one (equal there); a smaller target with finer K splits helped two models and
    slowed squeezenet, so it was not taken (figures: docs/perf-notes.md, "Direct convolution
    kernel: launch shape")."""
    target = parallel * DIRECT_INVOCATIONS_PER_UNIT
    if -(-n // 4) * items >= target:
        px = 4
    else:
        px = 2 if n >= 128 else 1
    invocations = -(-n // px) * items
    lz = 1
    while lz < min(DIRECT_MAX_K_SPLIT, cap) and invocations * lz < target and steps // (2 * lz) >= 4:
        lz *= 2
    lx = max(1, min(cap // lz, pow2_ceil(-(-n // px))))
    return px, lx, lz


def use_tensor_cores(vkdev, m: int, n: int, k: int, allowed: bool = True) -> bool:
    """convolution_coopmat.comp for this fp16 product (m x k weights, k x n columns)?

    Where the device multiplies 16x16x16 fp16 tiles natively with 32-wide subgroups
    (NVIDIA), for products of at least TENSOR_CORE_MIN_MACS multiply-adds. The tensor cores
    pay off on large products (VGG's 3x3 layers); on small ones (mobilenet_v2's 1x1
    products) they gained nothing, so those keep the scalar kernel (figures:
    docs/perf-notes.md, "Tensor-core convolution: the threshold"). `allowed`
    (opt.use_cooperative_matrix) False or VKNCNN_COOPMAT=0 turns them off."""
    return m >= 16 and k >= 64 and m * n * k >= TENSOR_CORE_MIN_MACS and tensor_core_device(vkdev, allowed)


def split_k(tiles: int, k: int, parallel: int, min_slice: int = 64) -> int:
    """How many slices of K to sum separately (split-K) when the tiles alone cannot keep
    `parallel` workgroups busy: deep layers on small images (512 channels at 7x7 make 8
    tiles). Each slice keeps at least `min_slice` of K (4 chunks of 16 for the scalar
    kernel; 4 chunks of 32 for the tensor-core one, whose slices of 128 instead of 256
    made resnet50 and googlenet faster: docs/perf-notes.md, "Split-K: slice size");
    at most 16 slices. The slices meet in convolution_reduce.comp, a second dispatch.
    Measured and not adopted: adding the slices in place with fp32 atomics, the last
    workgroup of each tile applying the epilogue and re-zeroing the sums for the next
    replay, was slower on every model tried, because every slice adds into the same
    addresses and the last workgroup's pass is serial (figures: docs/perf-notes.md,
    "Split-K: summing slices in place with atomics (not adopted)")."""
    if parallel <= 1 or tiles >= parallel // 2 or k < 2 * min_slice:
        return 1
    return max(1, min(16, -(-parallel // tiles), k // min_slice))


def conv_tile(m: int, n: int, parallel: int = 1, cap: int = 256) -> tuple[int, int, int]:
    """(lx, ly, TM) for convolution.comp: tiles of TM*ly output channels x 4*lx pixels.

    On a CPU device (parallel 1) with enough output channels each invocation keeps 8 of them
    (TM=8): every value it reads from shared memory then feeds twice the multiply-adds,
    which was faster on lavapipe. On a GPU TM=8 was slower: TM=4 there (docs/perf-notes.md,
    "Output channels per invocation (TM) of convolution.comp")."""
    if parallel <= 1 and m >= 32:
        ly = min(8, pow2_ceil(-(-m // 8)))
        return max(4, min(pow2_ceil(-(-n // 4)), 32, cap // ly)), ly, 8
    lx, ly = gemm_tile(m, n, cap)
    return lx, ly, 4
