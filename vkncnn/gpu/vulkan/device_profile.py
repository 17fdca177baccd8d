"""Device profiles: run on this machine's GPU as if it were a weaker device class.

`VKNCNN_DEVICE_PROFILE=<name or path>` makes the runtime believe only what a device class
guarantees (an Android baseline, a phone, an integrated GPU): every limit becomes the smaller
of the real device's and the profile's, every feature the *and* of both. Kernel choices then
follow the clamped GpuInfo, so a test on a desktop GPU or on lavapipe exercises the paths a
phone takes, and the limit guard (device_limits.py) catches a plan that would not fit it.

A profile is a small JSON file (the shipped ones live in profiles/, each naming its source):

    {"name": "...", "source": "where every value comes from", "api_version": "1.1.106",
     "features": {"storageBuffer16BitAccess": false, "shaderFloat16": false, ...},
     "limits": {"maxComputeWorkGroupInvocations": 128, ...},
     "subgroup": {"size": 32, "supported_operations": ["BASIC", ...], "supported_stages": ["COMPUTE"]}}

A feature or limit the profile does not name is left as the device reports it; a baseline
profile therefore lists every feature it does *not* guarantee as false. A Khronos
Vulkan-Profiles JSON (`{"profiles": ..., "capabilities": ...}`) is read too: what its profile's
required capabilities list, with everything else left as the device has it.

What cannot be clamped: the subgroup *size* is the hardware's (a shader's subgroups are as
wide as the device makes them); a profile's size is kept in `DeviceProfile.subgroup_size`
for information only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import GpuError

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
ENV_VAR = "VKNCNN_DEVICE_PROFILE"

# GpuInfo attribute <- profile feature name
FEATURES = {
    "storageBuffer16BitAccess": "_fp16_storage",
    "uniformAndStorageBuffer16BitAccess": "_fp16_uniform",
    "shaderFloat16": "_fp16_arithmetic",
    "storageBuffer8BitAccess": "_int8_storage",
    "uniformAndStorageBuffer8BitAccess": "_int8_uniform",
    "shaderInt8": "_int8_arithmetic",
    "shaderInt16": "_int16",
    "shaderInt64": "_int64",
    "cooperativeMatrix": "_coopmat_feature",
    "vulkanMemoryModel": "_memory_model",
}
# GpuInfo attribute <- profile limit name (tuples are clamped per axis)
LIMITS = {
    "maxComputeWorkGroupSize": "_max_workgroup_size",
    "maxComputeWorkGroupCount": "_max_workgroup_count",
    "maxComputeWorkGroupInvocations": "_max_workgroup_invocations",
    "maxComputeSharedMemorySize": "_max_shared_memory_size",
    "maxPushConstantsSize": "_max_push_constants_size",
    "maxPerStageDescriptorStorageBuffers": "_max_storage_buffers_per_stage",
    "maxStorageBufferRange": "_max_storage_buffer_range",
    "maxMemoryAllocationSize": "_max_memory_allocation_size",
}
# a limit where a *larger* value is the weaker guarantee
MAX_ALIGNMENTS = {"minStorageBufferOffsetAlignment": "_min_storage_buffer_offset_alignment"}

SUBGROUP_BITS = {"BASIC": 0x1, "VOTE": 0x2, "ARITHMETIC": 0x4, "BALLOT": 0x8, "SHUFFLE": 0x10,
                 "SHUFFLE_RELATIVE": 0x20, "CLUSTERED": 0x40, "QUAD": 0x80}
STAGE_COMPUTE = 0x20


@dataclass
class DeviceProfile:
    """What one device class reports; None / absent means "as the device has it"."""
    name: str
    source: str = ""
    api_version: int | None = None
    features: dict = field(default_factory=dict)   # feature name -> bool
    limits: dict = field(default_factory=dict)     # limit name -> int or tuple
    subgroup_ops: int | None = None                # VkSubgroupFeatureFlags
    subgroup_stages: int | None = None             # VkShaderStageFlags
    subgroup_size: int | None = None               # information only (see the module doc)
    path: str = ""


def parse_version(text) -> int:
    """'1.1.106' -> VK_MAKE_API_VERSION(0, 1, 1, 106)."""
    try:
        parts = [int(p) for p in str(text).split(".")]
    except ValueError:
        raise GpuError(f"device profile: api_version {text!r} is not of the form 1.2.3") from None
    major, minor, patch = (parts + [0, 0, 0])[:3]
    return (major << 22) | (minor << 12) | patch


def _flag_bits(names, table: dict, what: str) -> int:
    bits = 0
    for name in names:
        key = str(name).removeprefix("VK_SUBGROUP_FEATURE_").removeprefix("VK_SHADER_STAGE_").removesuffix("_BIT")
        if key == "COMPUTE":
            bits |= STAGE_COMPUTE
        elif key in table:
            bits |= table[key]
        elif table is SUBGROUP_BITS:
            raise GpuError(f"device profile: unknown {what} {name!r}")
    return bits


def _checked_limits(limits: dict, where: str) -> dict:
    known = set(LIMITS) | set(MAX_ALIGNMENTS)
    out = {}
    for key, value in limits.items():
        if key not in known:
            continue  # a limit vkncnn never consults
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            raise GpuError(f"device profile {where}: limit {key} must be a non-negative integer "
                           f"(or a list of them), got {value!r}")
        out[key] = tuple(values) if isinstance(value, list) else value
    return out


def from_dict(data: dict, where: str = "<dict>") -> DeviceProfile:
    """A DeviceProfile from vkncnn's profile format, or from a Khronos Vulkan-Profiles file."""
    if not isinstance(data, dict):
        raise GpuError(f"device profile {where}: expected a JSON object, got {type(data).__name__}")
    if "profiles" in data and "capabilities" in data:
        return _from_khronos(data, where)
    features = data.get("features", {})
    if not isinstance(features, dict) or not all(isinstance(v, bool) for v in features.values()):
        raise GpuError(f"device profile {where}: 'features' must map names to true/false")
    subgroup = data.get("subgroup", {}) or {}
    profile = DeviceProfile(name=str(data.get("name", Path(where).stem)), source=str(data.get("source", "")),
                            features={k: v for k, v in features.items() if k in FEATURES},
                            limits=_checked_limits(data.get("limits", {}), where), path=where)
    if "api_version" in data:
        profile.api_version = parse_version(data["api_version"])
    if "supported_operations" in subgroup:
        profile.subgroup_ops = _flag_bits(subgroup["supported_operations"], SUBGROUP_BITS, "subgroup operation")
    if "supported_stages" in subgroup:
        profile.subgroup_stages = _flag_bits(subgroup["supported_stages"], {}, "stage")
    if subgroup.get("size") is not None:
        profile.subgroup_size = int(subgroup["size"])
    return profile


def _from_khronos(data: dict, where: str) -> DeviceProfile:
    """The required capabilities of the file's first profile (alternatives: the first one)."""
    name, spec = next(iter(data["profiles"].items()))
    profile = DeviceProfile(name=name, source=f"Khronos Vulkan-Profiles file {where}", path=where,
                            api_version=parse_version(spec.get("api-version", "1.0.0")))
    limits: dict = {}
    for cap in spec.get("capabilities", []):
        cap = cap[0] if isinstance(cap, list) else cap
        block = data["capabilities"].get(cap, {})
        for struct in block.get("features", {}).values():
            profile.features.update({k: bool(v) for k, v in struct.items() if k in FEATURES})
        for struct_name, props in block.get("properties", {}).items():
            limits.update(props.get("limits", {}) if struct_name == "VkPhysicalDeviceProperties" else {})
            if "maxMemoryAllocationSize" in props:
                limits["maxMemoryAllocationSize"] = props["maxMemoryAllocationSize"]
            for key, value in props.items():
                if key in ("subgroupSupportedOperations", "supportedOperations"):
                    profile.subgroup_ops = _flag_bits(value, SUBGROUP_BITS, "subgroup operation")
                elif key in ("subgroupSupportedStages", "supportedStages"):
                    profile.subgroup_stages = _flag_bits(value, {}, "stage")
                elif key == "subgroupSize":
                    profile.subgroup_size = int(value)
    profile.limits = _checked_limits(limits, where)
    return profile


def shipped_profiles() -> list[str]:
    """Names of the profiles that come with vkncnn."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.json"))


def load_profile(name_or_path: str) -> DeviceProfile:
    """A shipped profile by name, or any profile file by path."""
    text = str(name_or_path).strip()
    path = Path(text)
    if not (text.endswith(".json") or os.sep in text or "/" in text):
        path = PROFILE_DIR / f"{text}.json"
        if not path.is_file():
            raise GpuError(f"{ENV_VAR}={text!r}: no such device profile (shipped: "
                           f"{', '.join(shipped_profiles())}; or give the path of a .json file)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise GpuError(f"{ENV_VAR}: cannot read the device profile {str(path)!r}: {e.strerror or e}") from None
    except ValueError as e:
        raise GpuError(f"{ENV_VAR}: the device profile {str(path)!r} is not valid JSON: {e}") from None
    return from_dict(data, str(path))


def requested_profile() -> DeviceProfile | None:
    """The profile VKNCNN_DEVICE_PROFILE names, or None when it is unset or empty."""
    value = os.environ.get(ENV_VAR, "").strip()
    return load_profile(value) if value else None


def apply_profile(info, profile: DeviceProfile | None):
    """Clamp a GpuInfo in place to what `profile` reports (see the module doc); returns it."""
    if profile is not None:
        info.clamp_to(profile, FEATURES, LIMITS, MAX_ALIGNMENTS)
    return info
