"""Every shipped .spv is valid SPIR-V for the Vulkan versions it claims (spirv-val).

A module's header says its SPIR-V version; that fixes the oldest Vulkan that consumes it
(1.0 -> vulkan1.0, 1.1..1.3 -> vulkan1.1, 1.4 -> vulkan1.1spv1.4, 1.5 -> vulkan1.2,
1.6 -> vulkan1.3). Each module is validated for that environment and every newer one, since
a newer driver must accept it too; index.json's target (an entry's own, for the SPIR-V 1.0
builds that Vulkan 1.0 devices run: `spirv-val --target-env vulkan1.0`) must agree with the
headers.
Skipped where spirv-val is not installed (Debian: spirv-tools).
"""

import json
import shutil
import subprocess

import pytest

from vkncnn.gpu.compiler.registry import builtin_shaders
from vkncnn.gpu.compiler.spirv_reflect import reflect

SPIRV_VAL = shutil.which("spirv-val")
pytestmark = pytest.mark.skipif(SPIRV_VAL is None, reason="spirv-val (spirv-tools) is not installed")

SPIRV_DIR = builtin_shaders().spirv_dir
INDEX = json.loads((SPIRV_DIR / "index.json").read_text())
FILES = sorted(e["file"] for variants in INDEX["shaders"].values() for e in variants.values())
ENVS = ["vulkan1.0", "vulkan1.1", "vulkan1.1spv1.4", "vulkan1.2", "vulkan1.3"]
_OLDEST_ENV = {0: "vulkan1.0", 1: "vulkan1.1", 2: "vulkan1.1", 3: "vulkan1.1", 4: "vulkan1.1spv1.4",
               5: "vulkan1.2", 6: "vulkan1.3"}
_CAP_COOPMAT_KHR = 6022


def target_envs(spirv: bytes) -> list[str]:
    major, minor = reflect(spirv).spirv_version
    assert major == 1 and minor in _OLDEST_ENV, f"SPIR-V {major}.{minor}"
    return ENVS[ENVS.index(_OLDEST_ENV[minor]):]


def _validator_knows_coopmat() -> bool:
    """spirv-val releases before 2023.3 do not know the KHR cooperative-matrix capability."""
    out = subprocess.run([SPIRV_VAL, "--version"], capture_output=True, text=True).stdout
    try:
        year, release = out.split("v", 1)[1].split()[0].split(".")[:2]
        return (int(year), int(release.split("-")[0])) >= (2023, 3)
    except (IndexError, ValueError):
        return True


def test_every_shipped_file_is_listed():
    on_disk = sorted(p.name for p in SPIRV_DIR.glob("*.spv"))
    assert on_disk == FILES


def test_index_target_matches_the_headers():
    targets = set()
    for variants in INDEX["shaders"].values():
        for entry in variants.values():
            target = entry.get("target", INDEX["target"])  # e.g. "vulkan1.1-spv1.3"
            targets.add(target)
            env, spv = target.split("-spv")
            spirv = (SPIRV_DIR / entry["file"]).read_bytes()
            version = reflect(spirv).spirv_version
            assert f"{version[0]}.{version[1]}" == spv, entry["file"]
            assert target_envs(spirv)[0] == env, entry["file"]
    assert targets == {"vulkan1.1-spv1.3", "vulkan1.0-spv1.0"}


@pytest.mark.parametrize("name", FILES)
def test_spirv_is_valid(name):
    spirv = (SPIRV_DIR / name).read_bytes()
    if _CAP_COOPMAT_KHR in reflect(spirv).capabilities and not _validator_knows_coopmat():
        pytest.skip("this spirv-val predates SPV_KHR_cooperative_matrix")
    for env in target_envs(spirv):
        run = subprocess.run([SPIRV_VAL, "--target-env", env, str(SPIRV_DIR / name)],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, f"{name} --target-env {env}: {run.stdout}{run.stderr}"
