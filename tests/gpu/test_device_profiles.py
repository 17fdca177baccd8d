"""VKNCNN_DEVICE_PROFILE: the runtime believes only what a device class reports.

Unit tests of the clamp (a profile lowers a limit, a feature the profile lacks is reported
absent), then models run on lavapipe under every shipped profile: results match the numpy
path (fp32 1e-3; fp16 storage, and fp16 arithmetic, 3e-2 where the profile allows them),
the limit guard (device_limits) never fires and no convolution leaves the GPU (the
4-storage-buffer kernel variants; the SPIR-V 1.0 builds under Vulkan 1.0). With fp16 storage
a detection model is judged on the tensors entering its detection layer: thresholds and NMS
turn an fp16 rounding of a score near a threshold into another list of boxes, which says
nothing about the profile. The full grid (every benchmark model, every profile, every
precision) is `-m slow`.
"""

import json
import warnings

import numpy as np
import pytest

import vkncnn
from tests.models.common import model_io, model_weights, output_err
from tests.oracle import run_vkncnn
from vkncnn.errors import GpuError
from vkncnn.gpu.vulkan import device_limits, device_profile, instance
from vkncnn.tools.benchmark_models import INPUT_SHAPES
from vkncnn.tools.compare_models import detection_head_inputs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(instance.get_gpu_count() == 0, reason="no Vulkan device")]

PROFILES = device_profile.shipped_profiles()
_API_1_1 = (1 << 22) | (1 << 12)


@pytest.fixture
def profile_env(monkeypatch):
    """Start a fresh instance under the profile given, and a plain one afterwards."""
    def use(name):
        monkeypatch.setenv(device_profile.ENV_VAR, name)
        instance.destroy_gpu_instance()
        device_limits.clear_exceeded()
        return instance.get_gpu_info(0)
    yield use
    monkeypatch.delenv(device_profile.ENV_VAR, raising=False)
    instance.destroy_gpu_instance()


def test_shipped_profiles_name_their_source():
    assert {"VP_ANDROID_baseline_2021", "VP_ANDROID_baseline_2022", "VP_ANDROID_15_minimums",
            "adreno_740_turnip"} <= set(PROFILES)
    for name in PROFILES:
        data = json.loads((device_profile.PROFILE_DIR / f"{name}.json").read_text())
        assert data["name"] == name
        assert "Vulkan" in data["source"], name
        device_profile.load_profile(name)  # parses


def test_profile_lowers_limits_and_removes_features(profile_env):
    real = profile_env("")
    assert real.device_profile() is None
    real_values = (real.max_workgroup_invocations(), real.max_per_stage_storage_buffers(), real.api_version())
    info = profile_env("VP_ANDROID_baseline_2022")
    assert info.device_profile().name == "VP_ANDROID_baseline_2022"
    assert info.max_workgroup_invocations() == min(128, real_values[0])
    assert info.max_per_stage_storage_buffers() == min(4, real_values[1])
    assert info.max_workgroup_size() == tuple(min(a, b) for a, b in zip((128, 128, 64), real.max_workgroup_size()))
    assert info.max_shared_memory_size() <= 16384 and info.max_push_constants_size() <= 128
    assert info.min_storage_buffer_offset_alignment() >= 256  # an alignment: the larger is the weaker
    assert info.api_version() == min(real_values[2], device_profile.parse_version("1.1.106"))
    assert not info.support_fp16_storage() and not info.support_fp16_arithmetic()
    assert not info.support_cooperative_matrix() and not info.cooperative_matrix_shapes()
    assert info.subgroup_ops() & ~0x1 == 0  # basic operations only


def test_phone_report_profile_clamps_to_the_report(profile_env):
    """adreno_740_turnip: 16-bit storage buffers without the uniform-and-storage variant, no
    8-bit types, no shaderInt64, 128 MiB buffer ranges, no clustered subgroup operations."""
    real = profile_env("")
    info = profile_env("adreno_740_turnip")
    assert info.support_fp16_storage() == real.support_fp16_storage()
    assert info.support_fp16_arithmetic() == real.support_fp16_arithmetic()
    assert not (info.support_fp16_uniform() or info.support_int8_storage() or info.support_int8_arithmetic()
                or info.support_int64_arithmetic())
    assert info.max_storage_buffer_range() == min(134217728, real.max_storage_buffer_range())
    assert info.max_shared_memory_size() == min(32768, real.max_shared_memory_size())
    assert info.max_push_constants_size() == min(256, real.max_push_constants_size())
    assert info.subgroup_ops() == real.subgroup_ops() & 0xBF  # every operation but CLUSTERED
    assert info.device_profile().subgroup_size == 128 and info.api_version() <= (1 << 22 | 3 << 12 | 267)


def test_clamp_never_raises_a_value(tmp_path, profile_env):
    real = profile_env("")
    generous = {"name": "generous", "api_version": "9.9.9", "features": {"shaderFloat16": True},
                "limits": {"maxComputeWorkGroupInvocations": 1 << 30, "maxPerStageDescriptorStorageBuffers": 1 << 30}}
    path = tmp_path / "generous.json"
    path.write_text(json.dumps(generous))
    info = profile_env(str(path))
    assert info.max_workgroup_invocations() == real.max_workgroup_invocations()
    assert info.support_fp16_arithmetic() == real.support_fp16_arithmetic()
    assert info.api_version() == real.api_version()


def test_bad_profiles_are_clear_errors(tmp_path):
    with pytest.raises(GpuError, match="no such device profile"):
        device_profile.load_profile("no_such_phone")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(GpuError, match="not valid JSON"):
        device_profile.load_profile(str(bad))
    bad.write_text(json.dumps({"limits": {"maxPushConstantsSize": -1}}))
    with pytest.raises(GpuError, match="maxPushConstantsSize"):
        device_profile.load_profile(str(bad))


def test_khronos_profile_files_are_read(tmp_path):
    khronos = {"capabilities": {"baseline": {"features": {"VkPhysicalDevice16BitStorageFeatures": {
        "storageBuffer16BitAccess": True}}, "properties": {"VkPhysicalDeviceProperties": {"limits": {
            "maxComputeWorkGroupInvocations": 64, "maxComputeWorkGroupSize": [64, 64, 64]}}}}},
        "profiles": {"VP_TEST": {"api-version": "1.1.0", "capabilities": ["baseline"]}}}
    path = tmp_path / "VP_TEST.json"
    path.write_text(json.dumps(khronos))
    p = device_profile.load_profile(str(path))
    assert p.name == "VP_TEST" and p.api_version == _API_1_1
    assert p.limits == {"maxComputeWorkGroupInvocations": 64, "maxComputeWorkGroupSize": (64, 64, 64)}
    assert p.features == {"storageBuffer16BitAccess": True}


def test_guard_rejects_a_shader_beyond_the_profile(profile_env):
    from types import SimpleNamespace

    from vkncnn.gpu.compiler.registry import get_builtin_spirv
    from vkncnn.gpu.vulkan.pipeline import Pipeline

    profile_env("VP_ANDROID_baseline_2022")
    vkdev = instance.get_gpu_device(0)
    spirv = get_builtin_spirv("convolution", SimpleNamespace(use_fp16_storage=False), None)  # 6 storage buffers
    p = Pipeline(vkdev)
    with pytest.raises(device_limits.DeviceLimitExceeded, match="maxPerStageDescriptorStorageBuffers 4"):
        p.create(spirv)
    with pytest.raises(device_limits.DeviceLimitExceeded, match="invocations"):
        p.set_local_size_xyz(256, 1, 1)
    assert len(device_limits.exceeded()) == 2
    device_limits.clear_exceeded()


def test_vulkan_1_0_device_starts_and_refuses_only_1_1_kernels(profile_env):
    """Under a Vulkan 1.0 profile the device starts; built-in kernels come as SPIR-V 1.0, and a
    kernel that needs Vulkan 1.1 (subgroup operations) is refused alone."""
    from vkncnn.gpu.vulkan.pipeline import shader_pipeline

    info = profile_env("VP_ANDROID_baseline_2021")
    assert info.api_version() < _API_1_1 and not info.support_subgroup_ops()
    vkdev = instance.get_gpu_device(0)
    relu = shader_pipeline(vkdev, "relu", False, [0.0], (64, 1, 1))
    assert relu.shader_info.spirv_version == (1, 0)
    with pytest.raises(device_limits.KernelUnsupported, match="SPIR-V 1.3 needs Vulkan 1.1"):
        shader_pipeline(vkdev, "reduction_rows", False, [0, 0, 0, 0, 0, 0], (64, 1, 1), {"SUBGROUP": 1})
    assert device_limits.exceeded() == []


def _gpu_run(model: str, fp16: bool, outputs: list[str] | None = None, fp16_arithmetic: bool = False):
    """(outputs, net) of `model` on the GPU path: the blobs `outputs` (default: the model's)."""
    text, inputs, model_outputs = model_io(model)
    outputs = model_outputs if outputs is None else outputs
    net = vkncnn.Net()
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_arithmetic = fp16 and fp16_arithmetic
    net.load_param_mem(text)
    net.load_model(model_weights(model))
    with net.create_extractor() as ex:
        for name, arr in inputs.items():
            ex.input(name, vkncnn.Mat(arr))
        return {name: ex.extract(name)[1].numpy() for name in outputs}, net


def _run_under(name: str, model: str, fp16: bool, fp16_arithmetic: bool = False):
    """Run `model` on the GPU path under profile `name`; check it against the numpy path,
    the guard, and that every convolution ran on the GPU. Returns the net."""
    text, inputs, outputs = model_io(model)
    if fp16:
        head_inputs, head_outputs = detection_head_inputs(text)
        outputs = [o for o in outputs if o not in head_outputs] + head_inputs
    want = run_vkncnn(text, model_weights(model), inputs, outputs, gpu=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "runs on the CPU here" notes
        got, net = _gpu_run(model, fp16, outputs, fp16_arithmetic)
    tol = 3e-2 if fp16 else 1e-3
    for blob in outputs:
        assert got[blob].shape == want[blob].shape, f"{name} {model}:{blob} {got[blob].shape} != {want[blob].shape}"
        err = output_err(got[blob], want[blob])
        assert err <= tol, f"{name} {model}:{blob} rel err {err:.3g} > {tol}"
    assert device_limits.exceeded() == [], f"{name} {model}: {device_limits.exceeded()[:3]}"
    assert net.gpu is not None, f"{name} {model}: the net ran on the numpy path"
    # the planner's record of layers whose kernel did not fit the device (run_on_cpu)
    moved = [f"{layer.name} ({layer.type})" for layer in net.layers()
             if id(layer) in net.gpu.cpu_layers and "Convolution" in layer.type]
    assert moved == [], f"{name} {model}: convolutions moved to the CPU: {moved[:5]}"
    return net


def _conv_pipelines(vkdev) -> list[dict]:
    """The defines of every convolution pipeline made on the device."""
    return [dict(key[2]) for key in vkdev.shared_pipelines if key[0] in ("convolution", "convolution_direct")]


def test_convolutions_fit_4_storage_buffers(profile_env):
    """VP_ANDROID_baseline_2022 offers 4 storage buffers a stage: the convolutions take their
    BINDINGS=4 variants (no split-K, no folded residual: mobilenet_v2's conv -> Eltwise sums
    stay apart) and stay on the GPU, as every other layer does."""
    info = profile_env("VP_ANDROID_baseline_2022")
    assert info.max_per_stage_storage_buffers() == 4
    net = _run_under("VP_ANDROID_baseline_2022", "mobilenet_v2", fp16=False)
    assert not any(id(layer) in net.gpu.cpu_layers for layer in net.layers())
    convs = [layer for layer in net.layers() if layer.type == "Convolution"]
    assert convs and not any(layer.accepts_residual() for layer in convs)
    defines = _conv_pipelines(instance.get_gpu_device(0))
    assert defines and all(d["BINDINGS"] == 4 for d in defines), defines


# 3x3 stride 1 (Winograd), 1x1 into an Eltwise sum (direct, a residual fold candidate),
# 3x3 stride 2 on a small image (tiled, where split-K applies on a GPU)
GPU_KERNELS = """7767517
6 8
Input in 0 1 x
Split sp 1 2 x x1 x2
Convolution c1 1 1 x1 a 0=16 1=3 4=1 5=1 6=2304 9=1
Convolution c2 1 1 a b 0=16 1=1 5=1 6=256
Eltwise add 2 1 x2 b s 0=1
Convolution c3 1 1 s y 0=64 1=3 3=2 5=1 6=9216
"""


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
def test_gpu_kernels_fit_4_storage_buffers(fp16, profile_env, monkeypatch, tmp_path):
    """The kernels a GPU (not lavapipe) picks, forced here: Winograd, the direct kernel and
    the tiled kernel where split-K applies, all within 4 storage buffers, no residual folded
    and no split-K; equal to the numpy path. fp16: VP_ANDROID_baseline_2022's limits with
    16-bit storage granted."""
    import vkncnn.gpu.ops.convolution as gpu_conv
    import vkncnn.gpu.ops.winograd_convolution as gpu_winograd
    from vkncnn.tools.randweights import random_weights

    monkeypatch.setattr(gpu_conv, "parallel_target", lambda vkdev: 1024)
    monkeypatch.setattr(gpu_winograd, "winograd_device", lambda vkdev: True)
    monkeypatch.setattr(gpu_winograd, "WINOGRAD_MIN_MACS", 1 << 17)  # c1 (145k multiply-adds)
    monkeypatch.setattr(gpu_conv, "DIRECT_MAX_MACS", 1 << 16)        # c2 (16k), not c3 (184k)
    param = tmp_path / "k.param"
    param.write_text(GPU_KERNELS)
    weights = random_weights(str(param), seed=3, input_shapes=(16, 9, 7))
    x = np.random.default_rng(2).uniform(-1, 1, (16, 9, 7)).astype(np.float32)

    def run(gpu):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = net.opt.use_fp16_packed = fp16
        net.load_param_mem(GPU_KERNELS)
        net.load_model(weights)
        return net.run({"x": x})["y"], net

    profile_env("")  # the device as it is: split-K and the folded residual
    want, _ = run(False)
    run(True)
    plain = set(instance.get_gpu_device(0).shared_pipelines)
    assert {"convolution_reduce", "winograd_output"} <= {key[0] for key in plain}
    # c2 took the Eltwise sum in (residual_term, the last specialization, is 1)
    assert any(key[0] == "convolution_direct" and key[3][-1] == 1 for key in plain)
    name = "VP_ANDROID_baseline_2022"
    if fp16:
        data = json.loads((device_profile.PROFILE_DIR / f"{name}.json").read_text())
        data["features"]["storageBuffer16BitAccess"] = True
        name = str(tmp_path / "baseline_2022_fp16.json")
        (tmp_path / "baseline_2022_fp16.json").write_text(json.dumps(data))
    info = profile_env(name)
    assert info.max_per_stage_storage_buffers() == 4 and info.support_fp16_storage() == fp16
    got, net = run(True)
    tol = 2e-2 if fp16 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    assert device_limits.exceeded() == [] and not net.gpu.cpu_layers
    shared = instance.get_gpu_device(0).shared_pipelines
    defines = _conv_pipelines(instance.get_gpu_device(0))
    assert {"PX" in d for d in defines} == {True, False}  # direct and tiled both ran
    assert all(d["BINDINGS"] == 4 for d in defines), defines
    kernels = {key[0] for key in shared}
    assert "winograd_output" in kernels and "convolution_reduce" not in kernels


DECODE_FOLDS = """7767517
11 12
Input x 0 1 x
Input q 0 1 q
Input k 0 1 k
Input v 0 1 v
RMSNorm norm 1 1 x n 0=32 1=1e-6 2=1
Split split 1 2 n n1 n2
Gemm gate 1 1 n1 g 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=24 9=32
Swish act 1 1 g a
Gemm up 1 1 n2 u 10=-1 2=0 3=1 4=0 5=1 6=1 7=0 8=24 9=32
BinaryOp mul 2 1 a u y 0=2
SDPA attn 3 1 q k v o
"""


def test_decode_folds_need_more_than_4_storage_buffers(profile_env, tmp_path):
    """A decode step's folds (RMSNorm and gate into the matrix-vector kernel, attention in one
    dispatch) bind 5 to 7 storage buffers: under VP_ANDROID_baseline_2022 (4) the layers
    record apart instead, every one still on the GPU, equal to the numpy path."""
    from vkncnn.tools.randweights import random_weights

    (tmp_path / "decode.param").write_text(DECODE_FOLDS)
    weights = random_weights(str(tmp_path / "decode.param"), seed=5, input_shapes={"x": (1, 32)})
    rng = np.random.default_rng(4)
    feed = {"x": rng.uniform(-1, 1, (1, 32)), "q": rng.uniform(-1, 1, (4, 1, 8)),
            "k": rng.uniform(-1, 1, (2, 9, 8)), "v": rng.uniform(-1, 1, (2, 9, 8))}
    feed = {name: a.astype(np.float32) for name, a in feed.items()}

    def run(gpu):
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = gpu
        net.opt.use_fp16_storage = False
        net.load_param_mem(DECODE_FOLDS)
        net.load_model(weights)
        outputs = net.run(feed, ["y", "o"])
        return [outputs["y"], outputs["o"]], net

    want, _ = run(False)
    for name in ("", "VP_ANDROID_baseline_2022"):
        info = profile_env(name)
        got, net = run(True)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
        assert device_limits.exceeded() == [] and not net.gpu.cpu_layers
        kernels = {(key[0], dict(key[2]).get("BINDINGS")) for key in instance.get_gpu_device(0).shared_pipelines}
        folded = {("innerproduct_gemv", 7), ("sdpa_decode", None)}
        if info.max_per_stage_storage_buffers() >= 7:
            assert folded <= kernels, kernels
        else:
            assert not folded & kernels and ("innerproduct_gemv", 4) in kernels, kernels


def test_models_run_under_vulkan_1_0(profile_env):
    """VP_ANDROID_baseline_2021 (Vulkan 1.0): the device starts, every layer runs on the GPU
    from SPIR-V 1.0 modules, and the results are the numpy path's."""
    profile_env("VP_ANDROID_baseline_2021")
    net = _run_under("VP_ANDROID_baseline_2021", "mobilenet_v2", fp16=False)
    assert not any(id(layer) in net.gpu.cpu_layers for layer in net.layers())
    modules = instance.get_gpu_device(0).shader_modules.values()
    assert modules and {info.spirv_version for _module, info in modules} == {(1, 0)}


@pytest.mark.parametrize("name", PROFILES)
def test_squeezenet_under_profile(name, profile_env):
    info = profile_env(name)
    _run_under(name, "squeezenet", fp16=False)
    if info.support_fp16_storage() and info.api_version() >= _API_1_1:
        _run_under(name, "squeezenet", fp16=True)
    if name == "VP_ANDROID_15_minimums":  # fp16 arithmetic in 128-invocation workgroups, 16 KiB shared memory
        assert info.support_fp16_arithmetic()
        _run_under(name, "squeezenet", fp16=True, fp16_arithmetic=True)


@pytest.mark.parametrize("model", ["mobilenet_v2", "resnet18"])
def test_models_under_android_baseline(model, profile_env):
    profile_env("VP_ANDROID_15_minimums")
    _run_under("VP_ANDROID_15_minimums", model, fp16=True)


@pytest.mark.slow
@pytest.mark.parametrize("fp16", [False, True, "fp16a"], ids=["fp32", "fp16", "fp16a"])
@pytest.mark.parametrize("model", list(INPUT_SHAPES))
@pytest.mark.parametrize("name", PROFILES)
def test_every_model_under_every_profile(name, model, fp16, profile_env):
    info = profile_env(name)
    if fp16 and not info.support_fp16_storage():
        pytest.skip(f"{name} does not guarantee 16-bit storage")
    if fp16 == "fp16a" and not info.support_fp16_arithmetic():
        pytest.skip(f"{name} does not guarantee fp16 arithmetic")
    _run_under(name, model, bool(fp16), fp16_arithmetic=fp16 == "fp16a")
