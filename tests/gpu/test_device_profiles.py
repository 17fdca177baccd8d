"""VKNCNN_DEVICE_PROFILE: the runtime believes only what a device class reports.

Unit tests of the clamp (a profile lowers a limit, a feature the profile lacks is reported
absent), then models run on lavapipe under every shipped profile: results match the numpy
path (fp32 1e-3, fp16 storage 3e-2 where the profile allows fp16, and so fp16 arithmetic
where it allows that) and the limit guard (device_limits) never fires. The full grid (every
benchmark model, every profile, every precision) is `-m slow`.
"""

import json
import warnings

import pytest

from tests.models.common import model_io, model_weights, output_err
from tests.oracle import run_vkncnn
from vkncnn.errors import GpuError
from vkncnn.gpu.vulkan import device_limits, device_profile, instance
from vkncnn.tools.benchmark_models import INPUT_SHAPES
from vkncnn.tools.compare_models import run_vkncnn as run_vkncnn_fp16a

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
    assert {"VP_ANDROID_baseline_2021", "VP_ANDROID_baseline_2022", "VP_ANDROID_15_minimums"} <= set(PROFILES)
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


def test_vulkan_1_0_profile_keeps_the_gpu_off(profile_env):
    info = profile_env("VP_ANDROID_baseline_2021")
    assert info.api_version() < _API_1_1 and not info.support_subgroup_ops()
    with pytest.raises(GpuError, match="need Vulkan 1.1"):
        instance.get_gpu_device(0)


def _run_under(name: str, model: str, fp16: bool, fp16_arithmetic: bool = False):
    text, inputs, outputs = model_io(model)
    want = run_vkncnn(text, model_weights(model), inputs, outputs, gpu=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "runs on the CPU here" notes
        if fp16_arithmetic:
            got = run_vkncnn_fp16a(text, model_weights(model), inputs, outputs, True, True, fp16_arithmetic=True)
        else:
            got = run_vkncnn(text, model_weights(model), inputs, outputs, gpu=True, fp16=fp16)
    tol = 3e-2 if fp16 else 1e-3
    for blob in outputs:
        err = output_err(got[blob], want[blob])
        assert err <= tol, f"{name} {model}:{blob} rel err {err:.3g} > {tol}"
    assert device_limits.exceeded() == [], f"{name} {model}: {device_limits.exceeded()[:3]}"


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
