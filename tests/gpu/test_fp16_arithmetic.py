"""fp16 arithmetic (opt.use_fp16_arithmetic): the fp16a shader variants, when they are
chosen, and their accuracy against real ncnn's own fp16-arithmetic path.

Layers run on fp16-rounded inputs in vkncnn (fp16 storage and arithmetic) and in real ncnn's
Vulkan path with the same options; both are judged against real ncnn on the CPU in fp32,
and vkncnn's error must stay within twice ncnn's (or within FLOOR, two fp16 roundings of the
largest output, where ncnn's is smaller). Every case also checks that the fp16a variant of
the shader really ran: the dispatches are recorded. The functions whose fp16 form rounds
once (ReLU, Clip, add, max, ...) must give exactly the fp16-storage result.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import vkncnn
from tests.oracle import needs_gpu
from vkncnn.gpu.compiler import registry
from vkncnn.gpu.compiler.source import parse_manifest
from vkncnn.gpu.vulkan import command, device_limits, device_profile, instance
from vkncnn.testing import layer_param_text, random_layer_weights, rel_err
from vkncnn.tools.ncnn_oracle import ncnn_vulkan_fp16_arithmetic, run_ncnn, run_ncnn_vulkan

pytestmark = [pytest.mark.gpu, needs_gpu]

FLOOR = 1e-3  # two fp16 roundings (2^-11 each) of the largest output
_CAP_FLOAT16 = 9  # SPIR-V's OpCapability Float16


def _capabilities(spirv: bytes) -> set:
    words = np.frombuffer(spirv, np.uint32)
    caps, i = set(), 5
    while i < len(words):
        count, op = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if op == 17:  # OpCapability
            caps.add(int(words[i + 1]))
        i += max(count, 1)
    return caps


# -- the variant dimension ------------------------------------------------------------------
def test_manifest_fp16a_directive():
    m = parse_manifest("// variants: MODE=0,1,2\n// fp16a: MODE=0\n#version 450\nvoid main() {}\n")
    assert m.fp16a == {"MODE": ["0"]}
    assert m.has_fp16a({"MODE": "0"}) and not m.has_fp16a({"MODE": "1"})
    assert parse_manifest("// fp16a: all\n#version 450\n").has_fp16a({})
    assert parse_manifest("#version 450\n").fp16a is None
    with pytest.raises(vkncnn.ShaderCompileError, match="fp16a"):
        parse_manifest("// fp16a:\n#version 450\n")


def test_variant_resolution_and_shipped_fp16a():
    shaders = registry.builtin_shaders()
    key = lambda *a, **k: shaders.resolve(*a, **k)[1].key  # noqa: E731
    assert key("convolution", True, {"TM": 4}, fp16_arithmetic=True) == "fp16a;BINDINGS=6;DECONV=0;TM=4"
    # fp16 arithmetic needs fp16 storage
    assert key("convolution", False, {"TM": 4}, fp16_arithmetic=True) == "fp32;BINDINGS=6;DECONV=0;TM=4"
    assert key("gemm", True, {"MODE": 0}, fp16_arithmetic=True) == "fp16a;MODE=0"
    assert key("gemm", True, {"MODE": 1}, fp16_arithmetic=True) == "fp16s;MODE=1"  # not shipped for MODE 1
    assert key("softmax", True, fp16_arithmetic=True) == "fp16s"  # a long reduction: fp32 sums
    assert key("convolution_coopmat", True, fp16_arithmetic=True) == "fp16s"  # keeps what it does
    fp16a = {(stem, v.key) for stem in shaders.stems() for v in shaders.all_variants(stem) if v.fp16_arithmetic}
    assert {s for s, _ in fp16a} == {"convolution", "convolution_direct", "convolutiondepthwise", "gemm",
                                     "unaryop", "binaryop", "eltwise"}
    index = json.loads((shaders.spirv_dir / "index.json").read_text())["shaders"]
    for stem, k in fp16a:  # shipped, and really fp16: the Float16 capability only there
        spirv = (shaders.spirv_dir / index[stem][k]["file"]).read_bytes()
        assert _CAP_FLOAT16 in _capabilities(spirv), (stem, k)
        plain = (shaders.spirv_dir / index[stem][k.replace("fp16a", "fp16s")]["file"]).read_bytes()
        assert _CAP_FLOAT16 not in _capabilities(plain), (stem, k)


class _Info:
    def __init__(self, storage, arithmetic):
        self.storage, self.arithmetic = storage, arithmetic

    def support_fp16_storage(self):
        return self.storage

    def support_fp16_arithmetic(self):
        return self.arithmetic


class _Device:
    def __init__(self, storage, arithmetic):
        self.info = _Info(storage, arithmetic)


def test_fp16_arithmetic_choice():
    opt = vkncnn.Option()
    assert registry.effective_fp16_arithmetic(opt, _Device(True, True))
    assert not registry.effective_fp16_arithmetic(opt, _Device(True, False))  # no shaderFloat16
    assert not registry.effective_fp16_arithmetic(opt, _Device(False, True))  # no 16-bit storage
    opt.use_fp16_storage = False
    assert not registry.effective_fp16_arithmetic(opt, _Device(True, True))
    opt.use_fp16_storage, opt.use_fp16_arithmetic = True, False
    assert not registry.effective_fp16_arithmetic(opt, _Device(True, True))


# -- layers against real ncnn ----------------------------------------------------------------
def _record_dispatches(monkeypatch) -> list:
    seen = []
    record = command.VkCompute.record_pipeline
    monkeypatch.setattr(command.VkCompute, "record_pipeline",
                        lambda self, p, *a, **k: (seen.append((p.name, p.variant)), record(self, p, *a, **k))[1])
    return seen


def _vkncnn(text, weights, feed, fp16_arithmetic=True):
    net = vkncnn.Net()
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = True
    net.opt.use_fp16_arithmetic = fp16_arithmetic
    net.load_param_mem(text)
    net.load_model(weights)
    return net.run(feed, ["out0"])["out0"]


def _fp16(*shape, seed=0, scale=1.0):
    x = np.random.default_rng(seed).uniform(-scale, scale, shape)
    return x.astype(np.float16).astype(np.float32)


def _conv(outc, inc, k, group=1, extra=None):
    return {0: outc, 1: k, 5: 1, 6: outc * inc // group * k * k, **({7: group} if group > 1 else {}), **(extra or {})}


# (layer, params, input shapes, the shader whose fp16a variant must run)
CASES = [
    ("Convolution", _conv(32, 16, 3, extra={4: 1}), [(16, 12, 12)], "convolution"),
    ("Convolution", _conv(64, 256, 1, extra={9: 1}), [(256, 7, 7)], "convolution"),          # K 256: 16 chunks
    ("Convolution", _conv(24, 64, 3, extra={4: 1, 9: 5}), [(64, 9, 9)], "convolution"),       # Mish, pack1 out
    ("Deconvolution", _conv(16, 8, 4, extra={3: 2, 4: 1}), [(8, 6, 6)], "convolution"),
    ("ConvolutionDepthWise", _conv(32, 32, 3, group=32, extra={4: 1, 9: 1}), [(32, 15, 15)],
     "convolutiondepthwise"),
    ("ConvolutionDepthWise", _conv(6, 6, 5, group=6, extra={4: 2}), [(6, 11, 11)], "convolutiondepthwise"),
    ("ConvolutionDepthWise", _conv(16, 8, 3, group=4, extra={4: 1}), [(8, 9, 9)], "convolutiondepthwise"),
    ("InnerProduct", {0: 48, 1: 1, 2: 48 * 96}, [(20, 96)], "gemm"),
    ("Eltwise", {0: 1}, [(16, 10, 10), (16, 10, 10)], "eltwise"),
    ("BinaryOp", {0: 2}, [(16, 10, 10), (16, 1, 1)], "binaryop"),
    ("Clip", {0: -0.5, 1: 0.75}, [(16, 10, 10)], "unaryop"),
]


@pytest.fixture(scope="module")
def ncnn_fp16a():
    if not ncnn_vulkan_fp16_arithmetic():
        pytest.skip("real ncnn does not do fp16 arithmetic on this device: nothing to hold vkncnn to")


@pytest.mark.parametrize("type_name,params,shapes,shader", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_within_ncnns_fp16_arithmetic_error(monkeypatch, ncnn_fp16a, type_name, params, shapes, shader):
    text = layer_param_text(type_name, params, len(shapes))
    weights = random_layer_weights(type_name, params, len(shapes))
    feed = {f"in{i}": _fp16(*s, seed=i) for i, s in enumerate(shapes)}
    want = run_ncnn(text, weights, feed, ["out0"])["out0"]
    ncnn_err = rel_err(run_ncnn_vulkan(text, weights, feed, ["out0"])["out0"], want)
    seen = _record_dispatches(monkeypatch)
    got = _vkncnn(text, weights, feed)
    assert any(s == shader and v.startswith("fp16a") for s, v in seen), seen
    err = rel_err(got, want)
    print(f"{type_name} {params}: vkncnn fp16a {err:.2e}, ncnn fp16a {ncnn_err:.2e}")
    assert err <= max(2 * ncnn_err, FLOOR), f"{type_name} {params}: err {err:.3g}, ncnn's fp16a {ncnn_err:.3g}"


@pytest.mark.parametrize("type_name,params,shapes", [
    ("ReLU", {0: 0.1}, [(16, 9, 9)]),                          # leaky: the slope stays fp32
    ("Clip", {0: -0.3, 1: 0.4}, [(16, 9, 9)]),
    ("AbsVal", {}, [(5, 7)]),
    ("Eltwise", {0: 1}, [(8, 9, 9), (8, 9, 9)]),
    ("Eltwise", {0: 2}, [(8, 9, 9), (8, 9, 9)]),
    ("BinaryOp", {0: 0}, [(8, 9, 9), (8, 9, 9)]),
    ("BinaryOp", {0: 5}, [(8, 9, 9), (8, 9, 9)]),
    ("BinaryOp", {0: 2, 1: 1, 2: 0.3}, [(8, 9, 9)]),           # with a scalar: fp32 inside
])
def test_single_rounding_functions_equal_fp16_storage(monkeypatch, type_name, params, shapes):
    """fp16a computes these in fp16 with one rounding: bit for bit the fp16-storage result
    (fp32 arithmetic, one rounding at the store), NaN and infinities included."""
    text = layer_param_text(type_name, params, len(shapes))
    feed = {}
    for i, s in enumerate(shapes):
        x = _fp16(*s, seed=i, scale=3.0)
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
        feed[f"in{i}"] = x
    weights = random_layer_weights(type_name, params, len(shapes))
    seen = _record_dispatches(monkeypatch)
    got = _vkncnn(text, weights, feed)
    assert any(v.startswith("fp16a") for _, v in seen), seen
    want = _vkncnn(text, weights, feed, fp16_arithmetic=False)
    np.testing.assert_array_equal(got, want)


def test_direct_kernel_fp16a(monkeypatch, ncnn_fp16a):
    """convolution_direct.comp (a GPU's kernel for small layers) in fp16a, split K included."""
    import vkncnn.gpu.ops.convolution as gpu_conv

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 1 << 40)
    params = _conv(16, 128, 3, extra={4: 1, 9: 2, 10: [0.1]})
    text = layer_param_text("Convolution", params, 1)
    weights = random_layer_weights("Convolution", params, 1)
    feed = {"in0": _fp16(128, 6, 7)}
    want = run_ncnn(text, weights, feed, ["out0"])["out0"]
    ncnn_err = rel_err(run_ncnn_vulkan(text, weights, feed, ["out0"])["out0"], want)
    seen = _record_dispatches(monkeypatch)
    err = rel_err(_vkncnn(text, weights, feed), want)
    assert any(s == "convolution_direct" and v.startswith("fp16a") for s, v in seen), seen
    assert err <= max(2 * ncnn_err, FLOOR), f"err {err:.3g}, ncnn's fp16a {ncnn_err:.3g}"


# -- devices without shaderFloat16 ---------------------------------------------------------
def test_no_shader_float16_means_fp32_arithmetic(tmp_path, monkeypatch):
    """A device (profile) with 16-bit storage and no shaderFloat16: the option is cleared when
    the net binds, the shaders compute in fp32 (no fp16a variant runs, none trips the guard),
    and a Pipeline asked for fp16 arithmetic still gets the fp16-storage variant."""
    from vkncnn.gpu.vulkan.pipeline import shader_pipeline

    path = tmp_path / "no_float16.json"
    path.write_text(json.dumps({"name": "no_float16", "features": {"shaderFloat16": False}}))
    monkeypatch.setenv(device_profile.ENV_VAR, str(path))
    instance.destroy_gpu_instance()
    device_limits.clear_exceeded()
    try:
        info = instance.get_gpu_info(0)
        assert info.support_fp16_storage() and not info.support_fp16_arithmetic()
        params = _conv(16, 8, 3, extra={4: 1, 9: 1})
        text = layer_param_text("Convolution", params, 1)
        weights = random_layer_weights("Convolution", params, 1)
        seen = _record_dispatches(monkeypatch)
        net = vkncnn.Net()
        net.load_param_mem(text)
        assert net.opt.use_fp16_storage and not net.opt.use_fp16_arithmetic
        net.load_model(weights)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = net.run({"in0": _fp16(8, 9, 9)}, ["out0"])["out0"]
        assert got.shape == (16, 9, 9) and np.isfinite(got).all()
        assert seen and all(v.startswith(("fp16s", "fp32")) for _, v in seen), seen
        vkdev = instance.get_gpu_device(0)
        assert shader_pipeline(vkdev, "unaryop", True, [0, 0.0, 0.0, 0.0], (64, 1, 1), {"PACK4": 1},
                               fp16_arithmetic=True).variant == "fp16s;PACK4=1"
        assert device_limits.exceeded() == []
    finally:
        monkeypatch.delenv(device_profile.ENV_VAR)
        instance.destroy_gpu_instance()
