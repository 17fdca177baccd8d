"""The fuzzer's `gpuD` / `gpuT` paths (and their fp16 `gpuD16` / `gpuT16`): the Vulkan path
as a discrete GPU takes it, on whatever device is at hand.

vkncnn picks convolution kernels by the device: on a CPU implementation (lavapipe,
parallel_target 1) every product takes the tiled convolution.comp, so the kernels a real
GPU runs (convolution_direct.comp below DIRECT_MAX_MACS, split-K with
convolution_reduce.comp when the tiles are too few, Winograd F(2,3) for 3x3 stride-1
layers) are never checked against ncnn there. These paths make the device look like a GPU
while a case runs in this process (ncnn runs in its own):

  gpuD  parallel_target 1024, Winograd at any size (not only >= WINOGRAD_MIN_MACS), the
        direct kernel where conv.py's threshold takes it (all but the largest products)
  gpuT  parallel_target 1024, neither Winograd nor the direct kernel: the tiled kernel
        with split-K
  gpuW  as gpuD, with Winograd F(4x4, 3x3) wherever Winograd runs (choose_tile takes it
        only on images larger than fuzzed ones)
  gpuC  as gpuT, and the tensor-core kernels (convolution_coopmat.comp, and gemm_coopmat.comp
        for InnerProduct, Gemm, MatMul and MultiHeadAttention) at any size where the device
        has cooperative matrices (gpuC16: they are fp16-only); elsewhere gpuT again

The tensor-core kernels need a device with cooperative matrices: lavapipe has none, the
H200 (NVIDIA) has, so gpuC16 is a path for that machine.

Every path also has an fp16-arithmetic form, suffix `16a` (gpu16a, gpuD16a, ...): fp16
storage and fp16 arithmetic, judged against real ncnn's own Vulkan fp16-arithmetic error on
the same case (runner.compare).
"""

from __future__ import annotations

from contextlib import contextmanager

PROFILES = {"gpuD": {"winograd": 0, "direct": None}, "gpuT": {"winograd": 1 << 62, "direct": 0},
            "gpuC": {"winograd": 1 << 62, "direct": 0, "tensor": 0},
            "gpuW": {"winograd": 0, "direct": None, "winograd_tile": 4}}


def base_path(path: str) -> str:
    """'cpu', 'gpu', 'gpu16' or 'gpu16a': the precision and device a path runs at."""
    if path == "cpu":
        return "cpu"
    if path.endswith("16a"):
        return "gpu16a"
    return "gpu16" if path.endswith("16") else "gpu"


def kernel_profile(path: str) -> str:
    """The path without its precision suffix: 'gpuD16a' -> 'gpuD'."""
    return path.removesuffix("16a").removesuffix("16")


@contextmanager
def device_profile(path: str):
    """Patch the kernel choice for `path` while the block runs (a no-op for cpu/gpu/gpu16)."""
    profile = PROFILES.get(kernel_profile(path))
    if profile is None:
        yield
        return
    from vkncnn.gpu.ops import convolution as conv
    from vkncnn.gpu.ops import matrix_product as gemm
    from vkncnn.gpu.ops import winograd_convolution as winograd

    saved = (conv.parallel_target, winograd.parallel_target, winograd.WINOGRAD_MIN_MACS, conv.DIRECT_MAX_MACS,
             conv.TENSOR_CORE_MIN_MACS, gemm.GEMM_TENSOR_CORE_MIN_MACS, conv.choose_tile)
    conv.parallel_target = winograd.parallel_target = lambda vkdev: 1024
    winograd.WINOGRAD_MIN_MACS = profile["winograd"]
    if profile["direct"] is not None:
        conv.DIRECT_MAX_MACS = profile["direct"]
    conv.TENSOR_CORE_MIN_MACS = profile.get("tensor", conv.TENSOR_CORE_MIN_MACS)
    gemm.GEMM_TENSOR_CORE_MIN_MACS = profile.get("tensor", gemm.GEMM_TENSOR_CORE_MIN_MACS)
    if "winograd_tile" in profile:
        conv.choose_tile = lambda opt, outh, outw: profile["winograd_tile"]
    try:
        yield
    finally:
        (conv.parallel_target, winograd.parallel_target, winograd.WINOGRAD_MIN_MACS, conv.DIRECT_MAX_MACS,
         conv.TENSOR_CORE_MIN_MACS, gemm.GEMM_TENSOR_CORE_MIN_MACS, conv.choose_tile) = saved
