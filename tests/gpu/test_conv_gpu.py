"""GPU path of the convolution and matrix-product family against the numpy path.

Convolution, ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise, Convolution1D
(shaders/convolution.comp, convolutiondepthwise.comp), InnerProduct, Gemm, MatMul and
MultiHeadAttention (shaders/gemm.comp, multiheadattention_*.comp). Every case runs through
vkncnn.testing.test_layer: fp32 storage within 1e-4 and fp16 storage within 1e-2, each with
pack1 and pack4 layouts. The numpy path is itself checked against real ncnn in tests/layers.
Validation messages fail any test (tests/conftest.py turns validation on).
"""

from __future__ import annotations

import numpy as np
import pytest

from vkncnn import testing
from vkncnn.format.paramdict import ParamDict
from vkncnn.gpu.vulkan import instance
from vkncnn.layer import create_layer
from vkncnn.testing import random_layer_weights, run_layer

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(instance.get_gpu_count() == 0,
                                 reason=f"no Vulkan device ({instance.unavailable_reason()})")]

ACTIVATIONS = [(0, None), (1, None), (2, [0.1]), (3, [-0.3, 0.4]), (4, None), (5, None), (6, [0.2, 0.5])]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def layer_for(type_name: str, params: dict):
    layer = create_layer(type_name)
    pd = ParamDict()
    for k, v in params.items():
        pd.set(k, np.asarray(v, np.float32) if isinstance(v, list) else v)
    layer.load_param(pd)
    return layer


def check(type_name, params, weights, inputs, n_outputs=1):
    """GPU vs numpy in the four variants; the configuration must really be on the GPU."""
    layer = layer_for(type_name, params)
    assert layer.support_vulkan and layer.support_vulkan_packing, f"{type_name} {params} is not on the GPU"
    report = testing.test_layer(type_name, params, weights, inputs, n_outputs)
    assert report.ok, str(report)
    return report


def conv_case(type_name, outc, inc, kw, kh=None, group=1, bias=True, extra=None, seed=0):
    """(params, weights) for a (de)convolution: ncnn's flat weights, tagged, then the bias."""
    kh = kw if kh is None else kh
    size = outc * (inc // group) * kw * kh
    params = {0: outc, 1: kw, 11: kh, 5: int(bias), 6: size, **(extra or {})}
    if group > 1:
        params[7] = group
    weights = [(rand(size, seed=seed), True)] + ([rand(outc, seed=seed + 1)] if bias else [])
    return params, weights


# -- Convolution ------------------------------------------------------------------------------
# (outc, inc, kernel, extra params, input shape): kernels 1/2/3/5, strides, dilations, every
# pad form (explicit, asymmetric, SAME_UPPER/LOWER with its crop quirk), pad_value, every
# activation, and inputs of 1-4 dims; channel counts cycle through 1/3/4/8/12/16/24.
CONV_CASES = [
    (8, 3, 3, {}, (3, 9, 11)),
    (4, 4, 3, {4: 1, 9: 1}, (4, 7, 9)),
    (12, 8, 3, {3: 2, 4: -233, 9: 2, 10: [0.1]}, (8, 10, 7)),
    (16, 12, 5, {2: 2, 4: -234, 9: 3, 10: [-0.3, 0.4]}, (12, 13, 12)),
    (24, 16, 1, {9: 4}, (16, 6, 5)),
    (3, 24, 1, {3: 2, 9: 5}, (24, 7, 7)),
    (8, 8, 3, {4: 2, 15: 0, 14: 1, 16: 3, 18: 0.5, 9: 6, 10: [0.2, 0.5]}, (8, 5, 6)),
    (1, 4, 2, {13: 2, 12: 2, 5: 0}, (4, 9, 8)),
    (12, 1, 3, {4: 1, 18: -1.0}, (9, 10)),              # 2-D: one channel
    (8, 1, 3, {4: 1}, (25,)),                           # 1-D: one row
    (16, 20, 1, {9: 1}, (20,)),                         # 1-D into 1x1: ncnn's flat path
    (8, 4, 3, {4: 1, 14: 0, 16: 0}, (4, 1, 9, 11)),     # 4-D with depth 1
    (20, 12, 3, {1: 3, 11: 1, 3: 1, 13: 2, 4: -233}, (12, 11, 9)),  # 3x1 kernel, per-axis stride
    (64, 16, 3, {4: 1}, (16, 17, 19)),                  # several tiles each way
]


@pytest.mark.parametrize("outc,inc,k,extra,shape", CONV_CASES)
def test_convolution(outc, inc, k, extra, shape):
    extra = dict(extra)
    params, weights = conv_case("Convolution", outc, inc, k, extra.get(11), bias=extra.pop(5, 1) == 1,
                                extra=extra)
    check("Convolution", params, weights, [rand(*shape, seed=outc)])


# depthwise (group == channels == num_output) and general groups
DW_CASES = [
    (4, 4, 3, 4, {4: 1, 9: 1}, (4, 9, 9)),
    (8, 8, 3, 8, {3: 2, 4: -234, 9: 4}, (8, 11, 10)),
    (3, 3, 5, 3, {2: 2, 4: 4, 18: 0.25, 9: 6}, (3, 7, 8)),
    (12, 12, 3, 12, {4: -233, 3: 2, 9: 5}, (12, 6, 7)),
    (16, 16, 1, 16, {9: 3, 10: [0.0, 0.5]}, (16, 5, 5)),
    (12, 8, 3, 4, {4: 1}, (8, 9, 9)),       # 2 in, 3 out per group
    (8, 4, 3, 4, {4: 1, 9: 2, 10: [0.2]}, (4, 7, 6)),  # channel multiplier 2
    (24, 24, 3, 2, {4: 1}, (24, 6, 5)),     # 12 per group, groups straddle packs of 4
    (6, 3, 3, 3, {}, (3, 6, 6)),
    (4, 1, 3, 1, {4: 1}, (7, 9)),           # 2-D input, one group
    (24, 24, 3, 8, {4: 1, 9: 1}, (24, 7, 6)),   # 3 -> 3 per group across packs of 4: direct loop
    (16, 8, 3, 8, {3: 2, 4: 1, 9: 4}, (8, 9, 9)),  # channel multiplier 2, pack4 in and out
]


@pytest.mark.parametrize("outc,inc,k,group,extra,shape", DW_CASES)
def test_convolutiondepthwise(outc, inc, k, group, extra, shape):
    params, weights = conv_case("ConvolutionDepthWise", outc, inc, k, group=group, extra=extra)
    check("ConvolutionDepthWise", params, weights, [rand(*shape, seed=outc + group)])


# -- Deconvolution --------------------------------------------------------------------------
DECONV_CASES = [
    (8, 3, 3, {}, (3, 5, 6)),
    (4, 4, 4, {3: 2, 4: 1, 9: 1}, (4, 5, 6)),
    (12, 8, 3, {3: 2, 2: 2, 18: 1, 19: 0, 9: 4}, (8, 4, 5)),
    (3, 12, 3, {3: 2, 4: -233, 20: 9, 21: 8, 9: 2, 10: [0.1]}, (12, 5, 5)),
    (16, 4, 3, {3: 2, 4: -234, 20: 10, 21: 9, 9: 5}, (4, 5, 6)),
    (8, 16, 2, {3: 3, 13: 2, 4: 1, 15: 0, 14: 0, 16: 2, 9: 6}, (16, 4, 3)),
    (8, 1, 3, {3: 2}, (5, 6)),       # 2-D
    (4, 1, 3, {3: 2}, (7,)),         # 1-D
    (24, 8, 1, {9: 3, 10: [-0.5, 0.5]}, (8, 3, 4)),
]


@pytest.mark.parametrize("outc,inc,k,extra,shape", DECONV_CASES)
def test_deconvolution(outc, inc, k, extra, shape):
    params, weights = conv_case("Deconvolution", outc, inc, k, extra=extra)
    check("Deconvolution", params, weights, [rand(*shape, seed=outc)])


DECONV_DW_CASES = [
    (4, 4, 4, 4, {3: 2, 4: 1}, (4, 5, 6)),
    (8, 8, 3, 8, {3: 2, 12: 2, 18: 1, 9: 2, 10: [0.2]}, (8, 5, 5)),
    (3, 3, 2, 3, {3: 2, 9: 4}, (3, 4, 4)),
    (12, 8, 3, 4, {3: 3, 4: 1, 9: 1}, (8, 4, 5)),
    (16, 16, 3, 16, {3: 2, 4: -233, 20: 9, 21: 9}, (16, 5, 5)),
    (8, 16, 4, 8, {3: 2, 4: 1, 9: 1}, (16, 6, 5)),  # 2 -> 1 per group (mobilenet_yolo's upsample)
    (12, 12, 3, 4, {3: 2, 18: 1, 4: -233, 20: 9, 21: 9}, (12, 5, 5)),
]


@pytest.mark.parametrize("outc,inc,k,group,extra,shape", DECONV_DW_CASES)
def test_deconvolutiondepthwise(outc, inc, k, group, extra, shape):
    params, weights = conv_case("DeconvolutionDepthWise", outc, inc, k, group=group, extra=extra)
    check("DeconvolutionDepthWise", params, weights, [rand(*shape, seed=outc)])


# -- Convolution1D --------------------------------------------------------------------------
C1D_CASES = [
    (8, 3, 3, {}, (3, 11)),
    (4, 4, 3, {4: 1, 9: 1}, (4, 11)),
    (12, 8, 5, {4: -233, 3: 2, 2: 2, 9: 5}, (8, 17)),
    (3, 12, 2, {4: -234, 3: 2, 18: 0.7, 9: 6}, (12, 9)),
    (4, 1, 3, {4: 2, 15: 1, 18: -1.0, 9: 3, 10: [-0.5, 0.5]}, (13,)),
    (16, 5, 3, {4: 1, 9: 4}, (1, 5, 13)),
]


@pytest.mark.parametrize("outc,inc,k,extra,shape", C1D_CASES)
def test_convolution1d(outc, inc, k, extra, shape):
    size = outc * inc * k
    params = {0: outc, 1: k, 5: 1, 6: size, **extra}
    check("Convolution1D", params, [(rand(size, seed=k), True), rand(outc, seed=1)], [rand(*shape, seed=2)])


@pytest.mark.parametrize("act,act_params", ACTIVATIONS)
def test_conv_activations(act, act_params):
    extra = {9: act} if act_params is None else {9: act, 10: act_params}
    params, weights = conv_case("Convolution", 8, 4, 3, extra={4: 1, **extra})
    check("Convolution", params, weights, [rand(4, 6, 7, seed=act)])


# -- InnerProduct ---------------------------------------------------------------------------
IP_CASES = [
    (8, 12, {9: 1}, (12,)),
    (8, 12, {9: 3, 10: [-0.1, 0.2]}, (8, 12)),      # a batch of rows, packed by 4
    (5, 60, {}, (12, 5)),                            # flattened
    (5, 300, {9: 5}, (12, 5, 5)),
    (16, 300, {9: 4}, (300,)),
    (24, 48, {9: 6}, (3, 2, 2, 4)),                  # 4-D
    (12, 7, {9: 2, 10: [0.3]}, (3, 7)),
    (4, 1000, {}, (1000,)),
]


@pytest.mark.parametrize("outc,inc,extra,shape", IP_CASES)
def test_innerproduct(outc, inc, extra, shape):
    params = {0: outc, 1: 1, 2: outc * inc, **extra}
    check("InnerProduct", params, [(rand(outc * inc, seed=inc), True), rand(outc)], [rand(*shape, seed=3)])


@pytest.mark.parametrize("type_name,outc,inc,k,group,extra,shape", [
    ("Convolution", 64, 32, 3, 1, {4: 1, 9: 1}, (32, 7, 7)),
    ("Convolution", 20, 64, 1, 1, {9: 2, 10: [0.1]}, (64, 3, 3)),
    ("Deconvolution", 16, 32, 3, 1, {3: 2, 4: 1, 9: 4}, (32, 4, 4)),
    ("ConvolutionDepthWise", 32, 64, 3, 2, {4: 1}, (64, 5, 5)),
])
def test_gpu_tiling_and_split_k(monkeypatch, type_name, outc, inc, k, group, extra, shape):
    """The tiles and split-K (fp32 partial sums + convolution_reduce.comp) a discrete GPU gets."""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 0)  # the tiled kernel, not the direct one
    assert gpu_conv.split_k(8, 4608, 1024) == 16 and gpu_conv.split_k(600, 4608, 1024) == 1
    params, weights = conv_case(type_name, outc, inc, k, group=group, extra=extra)
    check(type_name, params, weights, [rand(*shape, seed=5)])


def test_split_k_survives_replays(monkeypatch):
    """Split-K (fp32 partial sums + convolution_reduce.comp): three inferences with new data
    through one recorded plan each match the numpy path, so nothing of one run leaks into
    the next. Two chained 3x3 layers, the second with a pack1 output (70 channels) and
    leaky ReLU, both split."""
    import vkncnn
    import vkncnn.gpu.ops.convolution as gpu_conv
    import vkncnn.gpu.vulkan.command as command

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 0)
    dispatched = []
    record = command.VkCompute.record_pipeline
    monkeypatch.setattr(command.VkCompute, "record_pipeline",
                        lambda self, p, *a, **k: (dispatched.append(p.name), record(self, p, *a, **k))[1])
    text = ("7767517\n3 3\nInput in0 0 1 in0 0=9 1=9 2=32\n"
            "Convolution c1 1 1 in0 a 0=64 1=3 4=1 5=1 6=18432 9=1\n"
            "Convolution c2 1 1 a out0 0=70 1=3 4=1 5=1 6=40320 9=2 10=0.1\n")
    weights = b"".join(np.asarray(w, np.float32).tobytes() for w in (
        [0.0], rand(18432, seed=1) * 0.1, rand(64, seed=2), [0.0], rand(40320, seed=3) * 0.1, rand(70, seed=4)))
    nets = []
    for gpu in (False, True):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
        net.load_param_mem(text)
        net.load_model(weights)
        nets.append(net)
    for seed in (5, 6, 7):
        x = rand(32, 9, 9, seed=seed)
        outs = []
        for net in nets:
            with net.create_extractor() as ex:
                ex.input("in0", vkncnn.Mat(x))
                outs.append(ex.extract("out0")[1].numpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
    # recorded once (each layer split, so reduced), replayed twice
    assert dispatched.count("convolution") == dispatched.count("convolution_reduce") == 2, dispatched


@pytest.mark.parametrize("type_name,outc,inc,k,group,extra,shape", [
    ("Convolution", 16, 8, 3, 1, {4: 1, 9: 1}, (8, 9, 11)),                 # K = 72: 3 chunks, pack4 out
    ("Convolution", 70, 8, 3, 1, {3: 2, 4: -233, 9: 2, 10: [0.1]}, (8, 13, 10)),  # ragged tiles, pack1 out
    ("Convolution", 24, 16, 5, 1, {2: 2, 4: 3, 18: 0.5, 9: 3, 10: [-0.3, 0.4]}, (16, 12, 12)),
    ("ConvolutionDepthWise", 32, 32, 3, 2, {4: 1, 9: 4}, (32, 17, 15)),     # 2 groups of 16
    ("Convolution", 128, 64, 3, 1, {4: 1, 9: 6, 10: [0.2, 0.5]}, (64, 9, 9)),   # split-K
    ("ConvolutionDepthWise", 48, 48, 3, 3, {4: 1}, (48, 6, 7)),             # 16 channels per group
])
def test_tensor_core_kernel_on_small_layers(monkeypatch, type_name, outc, inc, k, group, extra, shape):
    """convolution_coopmat.comp on small layers (its size threshold lowered to 0, split-K
    as on a big GPU). Where the device has no cooperative matrices (lavapipe) the scalar
    kernel runs instead and this is one more grid; on the H200 it covers the tensor-core
    kernel's edges: a last partial chunk, ragged tiles, pack1 output, pads, groups, split-K.
    (The kernel needs K >= 64, at least 16 output channels per group and a multiple of 4
    input channels per group: every case here qualifies.)"""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "TENSOR_CORE_MIN_MACS", 0)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 0)
    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    params, weights = conv_case(type_name, outc, inc, k, group=group, extra=extra)
    check(type_name, params, weights, [rand(*shape, seed=7)])


@pytest.mark.parametrize("parallel", [2, 64, 1024])
@pytest.mark.parametrize("type_name,outc,inc,k,group,extra,shape", [
    ("Convolution", 16, 8, 1, 1, {9: 1}, (8, 9, 11)),                       # 1x1
    ("Convolution", 64, 128, 1, 1, {5: 0, 9: 2, 10: [0.1]}, (128, 7, 7)),  # long K, no bias
    ("Convolution", 8, 128, 3, 1, {4: 1, 9: 1}, (128, 4, 5)),              # K split 32 ways
    ("Convolution", 24, 16, 3, 1, {4: 1, 9: 3, 10: [-0.3, 0.4]}, (16, 13, 10)),
    ("Convolution", 12, 8, 3, 1, {3: 2, 4: -233, 9: 6, 10: [0.2, 0.5]}, (8, 13, 10)),  # SAME, stride 2
    ("Convolution", 8, 4, 5, 1, {2: 2, 4: 3, 18: -0.5, 9: 4}, (4, 12, 12)),  # dilation, pad value
    ("Convolution", 8, 12, 3, 1, {3: 2, 13: 1, 14: 1, 15: 2, 16: 0, 9: 5}, (12, 9, 8)),  # asymmetric
    ("ConvolutionDepthWise", 32, 16, 3, 2, {4: 1, 9: 1}, (16, 17, 15)),   # 2 groups: 8 -> 16
    ("ConvolutionDepthWise", 64, 64, 3, 4, {4: 1, 9: 2}, (64, 6, 5)),      # 4 groups of 16
])
def test_direct_kernel(monkeypatch, parallel, type_name, outc, inc, k, group, extra, shape):
    """convolution_direct.comp (pack4 in and out) on every geometry, with the (PX, lz) choices
    of small and large GPUs: `parallel` 2 gives 4 pixels per invocation, 1024 splits K."""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: parallel)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 1 << 40)
    shaders = []
    make = gpu_conv.shader_pipeline
    monkeypatch.setattr(gpu_conv, "shader_pipeline", lambda vkdev, shader, *a, **kw: (
        shaders.append(shader), make(vkdev, shader, *a, **kw))[1])
    params, weights = conv_case(type_name, outc, inc, k, group=group, extra=extra)
    check(type_name, params, weights, [rand(*shape, seed=9)])
    assert "convolution_direct" in shaders


@pytest.mark.parametrize("f", [2, 4])
@pytest.mark.parametrize("parallel,channels_last", [(1, False), (1024, False), (1024, True)])
@pytest.mark.parametrize("outc,inc,extra,shape", [
    (12, 8, {4: 1, 9: 1}, (8, 9, 11)),                       # odd output: partial last tiles
    (8, 16, {4: 0, 9: 2, 10: [0.1]}, (16, 7, 6)),            # no padding: 5x4 output
    (4, 4, {4: 2, 18: 0.5, 9: 3, 10: [-0.3, 0.4]}, (4, 5, 5)),  # wide pads of a pad value
    (16, 8, {15: 0, 14: 1, 16: 2, 13: 1, 5: 0}, (8, 10, 9)),  # asymmetric pads, no bias
    (8, 8, {4: -233, 9: 4}, (8, 6, 7)),                      # SAME padding
    (64, 32, {4: 1, 9: 1}, (32, 12, 12)),                    # long products: split-K / tiles
    # channels multiples of 16 (tensor-core products): 80 outputs and 100 or 25 tiles are
    # not whole 64-blocks (clamped fragments), 48 inputs an odd count of 16-channel K steps
    (80, 48, {4: 1, 9: 1}, (48, 20, 19)),
    (8, 4, {4: 1}, (4, 3, 2)),                               # one tile, mostly padding
])
def test_winograd(monkeypatch, f, parallel, channels_last, outc, inc, extra, shape):
    """The Winograd F(f x f, 3x3) path (gpu/ops/winograd_convolution.py: input transform, grouped product,
    output transform) on every pad form, against the numpy path; `parallel` 1024 gives the
    product a large GPU's kernels (split-K, direct). `channels_last`: the layout of
    winograd_products.comp, forced (its tensor-core form where the device has one and the
    case fits, else its scalar form). The path must really run."""
    import vkncnn.gpu.ops.convolution as gpu_conv
    import vkncnn.gpu.ops.winograd_convolution as gpu_winograd

    monkeypatch.setattr(gpu_winograd, "winograd_device", lambda vkdev: True)
    monkeypatch.setattr(gpu_winograd, "WINOGRAD_MIN_MACS", 0)
    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: parallel)
    monkeypatch.setattr(gpu_conv, "choose_tile", lambda opt, outh, outw: f)
    monkeypatch.setattr(gpu_winograd, "channels_last_products", lambda *args: channels_last)
    made = []
    make = gpu_winograd.shader_pipeline
    monkeypatch.setattr(gpu_winograd, "shader_pipeline", lambda vkdev, shader, fp16, specs, local, defines=None: (
        made.append((shader, defines)), make(vkdev, shader, fp16, specs, local, defines))[1])
    params, weights = conv_case("Convolution", outc, inc, 3, extra=extra)
    if f == 4:
        # F(4, 3)'s transforms (coefficients up to 5/2 and 2 sqrt 2) amplify fp16 storage's
        # rounding of V, U and the products: ~2.5e-3 of the largest pre-activation output
        # (simulated in float64 with those three rounded; 1e-2 on the points +-1, +-2). The
        # weights are scaled by fan-in, as in real nets, so that a Clip's window is not a
        # 20th of the pre-activation range (where that error would exceed it)
        monkeypatch.setattr(testing, "FP16_TOLERANCE", 2e-2)
        weights[0] = (weights[0][0] / np.float32(np.sqrt(9 * inc)), True)
    check("Convolution", params, weights, [rand(*shape, seed=11)])
    assert ("winograd_output", {"F": f, "CHANNELS_LAST": int(channels_last)}) in made
    assert any(shader == "winograd_products" for shader, _ in made) == channels_last


def test_winograd43_fp16_rounding(monkeypatch):
    """F(4, 3) in fp16 storage on the points 0, +-sqrt 2, +-1/sqrt 2 (ncnn's Vulkan
    winograd43), not 0, +-1, +-2: layerfuzz --layers Convolution@cpuwinograd --seed 9601
    --case 3 --paths gpuD16 (96 -> 48 channels at 40x52, a Clip of [-0.95, 0.36]) was 6.9e-2
    off ncnn with the latter's transforms, ncnn's own Vulkan fp16 1.3e-2."""
    import vkncnn.gpu.ops.convolution as gpu_conv
    import vkncnn.gpu.ops.winograd_convolution as gpu_winograd

    monkeypatch.setattr(gpu_winograd, "winograd_device", lambda vkdev: True)
    monkeypatch.setattr(gpu_winograd, "WINOGRAD_MIN_MACS", 0)
    monkeypatch.setattr(gpu_conv, "choose_tile", lambda opt, outh, outw: 4)
    monkeypatch.setattr(testing, "FP16_TOLERANCE", 2e-2)  # the fuzzer's for this layer
    params, weights = conv_case("Convolution", 48, 96, 3, bias=False, extra={9: 3, 10: [-0.953125, 0.357421875]})
    weights[0] = (weights[0][0] / np.float32(np.sqrt(9 * 96)), True)
    x = np.random.default_rng(5).uniform(-1.5, 1.5, (96, 40, 52)).astype(np.float16).astype(np.float32)
    check("Convolution", params, weights, [x])


@pytest.mark.parametrize("f", [2, 4])
def test_winograd_weights_compute_the_convolution(f):
    """U = G g G^T with the transforms the shaders hard-code gives a 3x3 correlation."""
    from vkncnn.gpu.ops.winograd_convolution import frequencies, winograd_weights

    r = np.sqrt(2)  # F(4, 3) on the points 0, +-sqrt 2, +-1/sqrt 2, infinity (as ncnn's Vulkan)
    bt = {2: [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
          4: [[1, 0, -2.5, 0, 1, 0], [0, -r, -2, r / 2, 1, 0], [0, r, -2, -r / 2, 1, 0],
              [0, -r / 2, -0.5, r, 1, 0], [0, r / 2, -0.5, -r, 1, 0], [0, 1, 0, -2.5, 0, 1]]}[f]
    at = {2: [[1, 1, 1, 0], [0, 1, -1, -1]],
          4: [[1, 1, 1, 1, 1, 0], [0, r / 2, -r / 2, r, -r, 0], [0, 0.5, 0.5, 2, 2, 0],
              [0, r / 4, -r / 4, 2 * r, -2 * r, 1]]}[f]
    bt, at, t = np.array(bt, float), np.array(at, float), f + 2
    assert frequencies(f) == t * t
    rng = np.random.default_rng(3)
    g = rng.standard_normal((2, 3, 3, 3))
    d = rng.standard_normal((3, t, t))
    u = winograd_weights(g, 2, 3, f).reshape(t, t, 2, 3)
    v = np.einsum("ai,cij,bj->abc", bt, d, bt)
    y = np.einsum("ia,aboc,abc,jb->oij", at, u, v, at)
    direct = np.array([[[np.sum(d[:, i:i + 3, j:j + 3] * g[o]) for j in range(f)] for i in range(f)]
                       for o in range(2)])
    np.testing.assert_allclose(y, direct, rtol=1e-5, atol=1e-5)


def test_winograd_tile_choice():
    """F(4, 3) where its products need fewer workgroup columns, F(2, 3) on ties, and the
    Option's switches obeyed."""
    from vkncnn.gpu.ops.winograd_convolution import choose_tile
    from vkncnn.option import Option

    opt = Option()
    assert [choose_tile(opt, s, s) for s in (224, 56, 28, 14, 7)] == [4, 4, 4, 2, 2]
    opt.use_winograd43_convolution = False
    assert choose_tile(opt, 224, 224) == 2
    opt.use_winograd23_convolution = False
    assert choose_tile(opt, 224, 224) == 0
    opt = Option()
    opt.use_winograd_convolution = False
    assert choose_tile(opt, 56, 56) == 0


def test_direct_tile_choices():
    """Many pixels: 4 per invocation; few: 1 per invocation and K split inside the workgroup."""
    from vkncnn.gpu.ops.convolution import direct_tile

    assert direct_tile(24, 112 * 112, 4, 1024) == (2, 256, 1)  # 150 K invocations, K too short to split
    assert direct_tile(256, 56 * 56, 16, 1024) == (2, 128, 2)   # 401 K: 2 pixels each, K split 2 ways
    assert direct_tile(1024, 56 * 56, 16, 1024) == (4, 256, 1)  # 803 K invocations at 4 pixels each
    assert direct_tile(16, 55 * 55, 36, 1024) == (2, 32, 8)     # K split 8 ways, 4+ steps each
    px, lx, lz = direct_tile(128, 49, 512, 1024)                # 512 -> 512 channels at 7x7
    assert px == 1 and lz == 32 and lx * lz <= 256


@pytest.mark.parametrize("inc", [64, 66])
def test_innerproduct_weight_slices(monkeypatch, inc):
    """Weights larger than the device's storage-buffer range are cut into row slices; one
    input vector with a multiple of 4 inputs takes the vec4 matrix-vector kernel, any other
    length gemm.comp's scalar one."""
    import vkncnn.gpu.ops.matrix_product as gpu_gemm
    from vkncnn.gpu.vulkan.gpu_info import GpuInfo

    monkeypatch.setattr(GpuInfo, "max_storage_buffer_range", lambda self: 4096)
    shaders = []
    make = gpu_gemm.shader_pipeline
    monkeypatch.setattr(gpu_gemm, "shader_pipeline", lambda vkdev, shader, *a, **kw: (
        shaders.append(shader), make(vkdev, shader, *a, **kw))[1])
    params = {0: 40, 1: 1, 2: 40 * inc, 9: 1}
    check("InnerProduct", params, [(rand(40 * inc), True), rand(40)], [rand(inc, seed=1)])
    assert ("innerproduct_gemv" in shaders) == (inc % 4 == 0)


# -- Gemm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("trans_a,trans_b,out_t", [(0, 0, 0), (1, 0, 1), (0, 1, 0), (1, 1, 1)])
def test_gemm_blobs(trans_a, trans_b, out_t):
    m, k, n = 12, 7, 9
    a = rand(k, m) if trans_a else rand(m, k)
    b = rand(n, k, seed=1) if trans_b else rand(k, n, seed=1)
    base = {2: trans_a, 3: trans_b, 14: out_t}
    check("Gemm", {0: 0.5, 1: 2.0, **base}, [], [a, b])
    check("Gemm", {**base, 11: 1}, [], [a, b, rand(m, n, seed=2)])      # full C, N1M output
    check("Gemm", {**base, 1: -1.5}, [], [a, b, rand(n, seed=2)])        # C per column
    check("Gemm", base, [], [a, b, rand(m, 1, seed=2)])                 # C per row


@pytest.mark.parametrize("c_type", [-1, 0, 1, 2, 3, 4])
def test_gemm_constants(c_type):
    """Constant B (transB, a Linear layer) and constant C of every broadcast type."""
    m, k, n = 20, 16, 24
    c_shape = {-1: None, 0: (1,), 1: (m,), 2: (1, m), 3: (n, m), 4: (n, 1)}[c_type]
    weights = [(rand(n, k), True)] + ([(rand(*c_shape, seed=1), True)] if c_shape else [])
    params = {3: 1, 5: 1, 6: 1, 7: m, 8: n, 9: k, 10: c_type, 0: 0.75}
    check("Gemm", params, weights, [rand(m, k, seed=2)])


def test_gemm_constant_a_and_vectors():
    check("Gemm", {4: 1, 7: 5, 9: 6, 2: 1}, [(rand(5, 6), True)], [rand(6, 8, seed=1)])
    check("Gemm", {4: 1, 7: 8, 9: 6}, [(rand(6, 8), True)], [rand(6, 12, seed=1)])
    # one row against a wide constant B: the matrix-vector kernels, both B layouts
    check("Gemm", {3: 1, 5: 1, 6: 1, 7: 1, 8: 100, 9: 300, 10: 4}, [(rand(100, 300), True), (rand(100), True)],
          [rand(300, seed=1)])
    check("Gemm", {5: 1, 6: 1, 7: 1, 8: 100, 9: 300, 10: 4}, [(rand(300, 100), True), (rand(100), True)],
          [rand(300, seed=1)])
    check("Gemm", {}, [], [rand(3, 1, 8), rand(8, 5, seed=1)])           # (c, 1, w) operand


@pytest.mark.parametrize("m,c_type,alpha", [(1, 4, 1.0), (1, -1, 1.0), (20, 4, 0.5), (20, 3, 1.0), (7, 0, 2.0)])
def test_gemm_weight_slices(monkeypatch, m, c_type, alpha):
    """Constant weight rows beyond the device's storage-buffer range go up in slices of rows,
    each a block of output columns (the matrix-vector kernel for one row, gemm.comp else)."""
    from vkncnn.gpu.vulkan.gpu_info import GpuInfo

    # 64 fp32 (128 fp16) weight rows of 64 a slice: 4 (2) slices; every blob still fits
    monkeypatch.setattr(GpuInfo, "max_storage_buffer_range", lambda self: 16384)
    n, k = 200, 64
    c_shape = {-1: None, 0: (1,), 3: (n, m), 4: (n, 1)}[c_type]
    weights = [(rand(n, k), True)] + ([(rand(*c_shape, seed=1), True)] if c_shape else [])
    params = {0: alpha, 3: 1, 5: 1, 6: 1, 7: m, 8: n, 9: k, 10: c_type}
    check("Gemm", params, weights, [rand(m, k, seed=2)])


@pytest.mark.parametrize("bias,alpha,k,gemv", [(True, 1.0, 64, True), (False, 1.0, 64, True),
                                               (True, 0.5, 64, False), (True, 1.0, 30, False)])
def test_gemm_one_row_of_weights_reads_them_once(monkeypatch, bias, alpha, k, gemv):
    """A decode step's Gemm (one row times constant weight rows, transB, bias or none) runs the
    matrix-vector kernel InnerProduct uses; scaled products and k % 4 != 0 keep gemm.comp."""
    import vkncnn.gpu.ops.matrix_product as gpu_gemm

    shaders = []
    make = gpu_gemm.shader_pipeline
    monkeypatch.setattr(gpu_gemm, "shader_pipeline", lambda vkdev, shader, *a, **kw: (
        shaders.append(shader), make(vkdev, shader, *a, **kw))[1])
    n = 40
    params = {0: alpha, 3: 1, 5: 1, 6: 1, 7: 1, 8: n, 9: k, 10: 4 if bias else -1}
    weights = [(rand(n, k), True)] + ([(rand(n, seed=1), True)] if bias else [])
    check("Gemm", params, weights, [rand(1, k, seed=2)])
    assert ("innerproduct_gemv" in shaders) == gemv and ("gemm" in shaders) != gemv, shaders


# -- MatMul ---------------------------------------------------------------------------------
MATMUL_CASES = [
    ((7,), (7,)), ((7,), (7, 4)), ((5, 7), (7,)), ((5, 7), (7, 4)), ((12, 40), (40, 16)),
    ((3, 5, 7), (7, 4)), ((5, 7), (3, 7, 4)), ((3, 5, 7), (3, 7, 4)), ((1, 5, 7), (3, 7, 4)),
    ((2, 3, 5, 7), (3, 7, 4)), ((2, 1, 5, 7), (1, 3, 7, 4)), ((7,), (2, 3, 7, 4)), ((4, 12, 40), (40, 16)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_CASES)
@pytest.mark.parametrize("trans_b", [0, 1])
def test_matmul(sa, sb, trans_b):
    b = rand(*sb, seed=1)
    if trans_b and b.ndim > 1:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    check("MatMul", {0: trans_b}, [], [rand(*sa), b])


# -- MultiHeadAttention -----------------------------------------------------------------------
E, H = 16, 4
MHA_CASES = [
    ({0: E, 1: H, 2: E * E}, [(5, E)], 1),
    ({0: E, 1: H, 2: E * 12, 3: 8, 4: 6}, [(5, 12), (7, 8), (7, 6)], 1),
    ({0: E, 1: H, 2: E * 12, 3: 8, 4: 8}, [(5, 12), (7, 8)], 1),
    ({0: E, 1: H, 2: E * E, 5: 1}, [(5, E), (5, 5)], 1),
    ({0: E, 1: H, 2: E * E, 5: 1}, [(6, E), (8, E), (8, E), (H, 6, 8)], 1),
    ({0: E, 1: H, 2: E * E, 5: 1}, [(6, E), (8, E), (8, E), (8,)], 1),
    ({0: E, 1: 2, 2: E * E, 6: 0.3}, [(E,)], 1),
    ({0: E, 1: H, 2: E * E, 7: 1}, [(5, E), (0,), (0,)], 3),                   # first step
    ({0: E, 1: H, 2: E * E, 7: 1}, [(1, E), (H, 5, E // H), (H, 5, E // H)], 3),  # append
    ({0: E, 1: H, 2: E * E, 7: 1}, [(3, E), (6, E), (H, 5, E // H), (H, 5, E // H)], 3),  # cross
    ({0: E, 1: 1, 2: E * E, 7: 1, 5: 1}, [(2, E), (5, E), (5, E), (2, 5), (0,), (0,)], 3),
    ({0: 64, 1: 4, 2: 64 * 64}, [(40, 64)], 1),
]


@pytest.mark.parametrize("params,shapes,n_out", MHA_CASES)
def test_multiheadattention(params, shapes, n_out):
    weights = random_layer_weights("MultiHeadAttention", params, len(shapes), n_out, seed=1)
    inputs = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    check("MultiHeadAttention", params, weights, inputs, n_out)


# -- the tensor-core matrix product ------------------------------------------------------------
GEMM_TENSOR_CORE_CASES = [
    # ragged m, n, k (not multiples of the 64 x 64 tile or the 32-deep chunk), both B layouts,
    # a transposed A, C per row / column / full, alpha and beta
    ("Gemm", {0: 0.5, 1: 2.0}, [], [(70, 40), (40, 90)]),
    ("Gemm", {2: 1, 3: 1, 1: -1.5}, [], [(40, 70), (90, 40), (90,)]),
    ("Gemm", {3: 1, 11: 1}, [], [(70, 40), (90, 40), (70, 90)]),
    ("Gemm", {3: 1, 5: 1, 6: 1, 7: 100, 8: 72, 9: 48, 10: 4, 0: 0.75}, "linear", [(100, 48)]),
    # rows of tokens through a Linear layer with bias and a fused activation
    ("InnerProduct", {0: 80, 1: 1, 2: 80 * 64, 9: 2, 10: [0.1]}, "ip", [(70, 64)]),
    # batched and broadcast, packed operands
    ("MatMul", {0: 0}, [], [(2, 1, 20, 40), (1, 3, 40, 24)]),
    ("MatMul", {0: 1}, [], [(3, 36, 64), (3, 20, 64)]),
    ("MultiHeadAttention", {0: 64, 1: 2, 2: 64 * 64}, "mha", [(40, 64)]),
]


@pytest.mark.parametrize("type_name,params,weights,shapes", GEMM_TENSOR_CORE_CASES)
def test_gemm_tensor_core_kernel(monkeypatch, type_name, params, weights, shapes):
    """gemm_coopmat.comp on small products (its size threshold lowered to 0). Where the
    device has no cooperative matrices (lavapipe) gemm.comp runs instead and this is one more
    grid; on the H200 every case records the tensor-core kernel at least once."""
    import vkncnn.gpu.ops.matrix_product as gpu_gemm

    monkeypatch.setattr(gpu_gemm, "GEMM_TENSOR_CORE_MIN_MACS", 0)
    shaders = []
    make = gpu_gemm.shader_pipeline
    monkeypatch.setattr(gpu_gemm, "shader_pipeline", lambda vkdev, shader, *a, **kw: (
        shaders.append(shader), make(vkdev, shader, *a, **kw))[1])
    inputs = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    if weights == "linear":
        weights = [(rand(params[8], params[9], seed=5), True), (rand(params[8], seed=6), True)]
    elif weights == "ip":
        weights = [(rand(params[2], seed=5), True), rand(params[0], seed=6)]
    elif weights == "mha":
        weights = random_layer_weights(type_name, params, len(shapes), 1, seed=1)
    check(type_name, params, weights, inputs)
    device = instance.get_gpu_device()
    assert ("gemm_coopmat" in shaders) == gpu_gemm.tensor_core_device(device)


# -- configurations left to numpy, and layers working together ---------------------------------
def test_fallback_configurations_run_in_gpu_graph():
    """dynamic_weight and int8 layers run on numpy inside the GPU graph, with the same result."""
    params = {0: 4, 1: 3, 5: 1, 19: 1}
    assert not layer_for("Convolution", params).support_vulkan
    x, w, b = rand(3, 6, 7), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    want = run_layer("Convolution", params, b"", [x, w, b])[0]
    got = run_layer("Convolution", params, b"", [x, w, b], gpu=True)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_net_on_gpu(tmp_path):
    """A small net mixing the family (conv, depthwise, deconv, 1x1, flatten + InnerProduct)."""
    from vkncnn.mat import Mat
    from vkncnn.net import Net
    from vkncnn.tools.randweights import random_weights

    param = tmp_path / "family.param"
    param.write_text("""7767517
6 6
Input in0 0 1 in0
Convolution c1 1 1 in0 a 0=16 1=3 4=1 5=1 6=432 9=1
ConvolutionDepthWise d1 1 1 a b 0=16 1=3 3=2 4=1 5=1 6=144 7=16 9=6
Deconvolution u1 1 1 b c 0=8 1=4 3=2 4=1 5=1 6=2048 9=2 -23310=1,0.1
Convolution c2 1 1 c d 0=12 1=1 5=1 6=96 9=5
InnerProduct fc 1 1 d out0 0=10 1=1 2=115200
""")
    weights = random_weights(str(param), seed=0)
    x = rand(3, 31, 29)
    outs = []
    for gpu in (False, True):
        net = Net()
        net.opt.use_vulkan_compute = gpu
        net.load_param(str(param))
        net.load_model(weights)
        with net.create_extractor() as ex:
            ex.input("in0", Mat(x))
            outs.append(ex.extract("out0")[1].numpy())
    assert outs[1].shape == outs[0].shape == (10,)
    scale = max(1.0, float(np.abs(outs[0]).max()))
    assert float(np.abs(outs[1] - outs[0]).max()) / scale < 1e-2  # fp16 storage is the default
