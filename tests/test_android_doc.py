"""docs/android.md names only what exists, and the extras install on Termux what it says.

Termux's Python reports sys.platform "android" (CPython 3.13 and later on Android): the
`gpu` extra must pull only the pure-Python `vulkan` binding and cffi there, and the
`compiler` extra, whose glslang wheels exist only for Linux and macOS, nothing. The device
profiles the docs list are the ones that ship.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_readme import code_blocks, commands_in_readme, parser_commands
from vkncnn.gpu.vulkan import device_profile

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "android.md"
TERMUX = {"sys_platform": "android", "platform_system": "Linux", "platform_machine": "aarch64",
          "os_name": "posix", "implementation_name": "cpython", "python_version": "3.14",
          "python_full_version": "3.14.6", "platform_python_implementation": "CPython"}


def _extras() -> dict[str, list[str]]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _selected_on_termux(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement

    chosen = set()
    for text in requirements:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate(dict(TERMUX, extra="")):
            chosen.add(req.name)
    return chosen


def test_gpu_extra_pulls_only_the_binding_and_cffi_on_termux():
    extras = _extras()
    assert _selected_on_termux(extras["gpu"]) == {"vulkan", "cffi"}
    assert _selected_on_termux(extras["compiler"]) == set()
    linux = dict(TERMUX, sys_platform="linux")
    from packaging.requirements import Requirement
    assert all(Requirement(r).marker.evaluate(dict(linux, extra="")) for r in extras["compiler"])


def test_android_doc_commands_extras_and_variables_exist():
    text = DOC.read_text()
    shell = "\n".join(code for lang, code, _, _ in code_blocks(text) if lang == "sh")
    assert "pkg install python python-pip python-numpy" in shell and "vulkan-loader-android" in shell
    named = {e for group in re.findall(r"""pip install ["']?\.\[([\w,-]+)\]""", shell) for e in group.split(",")}
    assert named == {"gpu"} and named <= set(_extras())
    commands = commands_in_readme(text)
    assert "devices" in commands and commands <= parser_commands()
    env_doc = (ROOT / "docs" / "environment.md").read_text()
    variables = set(re.findall(r"\b(VKNCNN_[A-Z0-9_]+)\b", text))
    assert {"VKNCNN_NO_COMPILER", "VKNCNN_DEVICE_PROFILE"} <= variables
    assert all(f"`{name}`" in env_doc for name in variables), variables
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        assert "android.md" in page.read_text(), page


def test_docs_list_every_shipped_profile():
    gpu_doc = (ROOT / "docs" / "gpu.md").read_text()
    env_doc = (ROOT / "docs" / "environment.md").read_text()
    for name in device_profile.shipped_profiles():
        assert f"| `{name}` |" in gpu_doc, f"docs/gpu.md's profile table lacks {name}"
        assert f"`{name}`" in env_doc, f"docs/environment.md's VKNCNN_DEVICE_PROFILE lacks {name}"
