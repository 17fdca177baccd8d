"""README.md says only what runs: its Python blocks run, its commands exist, its extras exist.

Each ```python block runs on its own (a fresh namespace) with the repository root as the
working folder, as a reader who cloned the repository would run it. An HTML comment on
the line above a block changes that, used sparingly:

    <!-- readme-test: skip -->   never run (say why in the README's text)
    <!-- readme-test: gpu -->    run only where a Vulkan device exists
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vkncnn
from vkncnn.tools import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
MARK = re.compile(r"<!--\s*readme-test:\s*(\w+)\s*-->\s*$")


def code_blocks(text: str) -> list[tuple[str, str, str | None, int]]:
    """(language, code, mark, line number) of every fenced block."""
    blocks = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").splitlines()
        mark = MARK.search(before[-1]) if before else None
        line = text.count("\n", 0, m.start()) + 1
        blocks.append((m.group(1), m.group(2), mark.group(1) if mark else None, line))
    return blocks


def python_blocks() -> list:
    blocks = [b for b in code_blocks(README.read_text()) if b[0] == "python"]
    return [pytest.param(code, mark, id=f"line{line}") for _, code, mark, line in blocks]


def test_readme_has_python_blocks():
    assert len(python_blocks()) >= 2


@pytest.mark.parametrize("code,mark", python_blocks())
def test_python_block_runs(code, mark, monkeypatch):
    if mark == "skip":
        pytest.skip("marked readme-test: skip")
    if mark == "gpu" and vkncnn.get_gpu_count() == 0:
        pytest.skip("marked readme-test: gpu, and there is no Vulkan device")
    assert mark in (None, "skip", "gpu"), f"unknown readme-test mark {mark!r}"
    monkeypatch.chdir(ROOT)
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def commands_in_readme(text: str) -> set[str]:
    """`vkncnn NAME ...` (or `python3 -m vkncnn NAME ...`) starting a line of a shell block or
    an inline code span: the subcommands a reader is told to run."""
    shell = [code for lang, code, _, _ in code_blocks(text) if lang in ("sh", "bash", "console", "shell")]
    inline = re.findall(r"`([^`\n]+)`", FENCE.sub("", text))
    command = re.compile(r"^\$?\s*(?:python3? -m )?vkncnn\s+([a-z][a-z0-9-]*)", re.M)
    return {name for chunk in shell + inline for name in command.findall(chunk)}


def parser_commands() -> set[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return set(sub.choices)


def test_commands_in_readme_exist():
    documented = commands_in_readme(README.read_text())
    existing = parser_commands()
    assert {"info", "run", "bench", "devices", "digits"} <= documented  # the scan finds them
    missing = documented - existing
    assert not missing, f"README mentions vkncnn subcommands the CLI does not have: {sorted(missing)}"


def test_every_cli_command_is_in_readme():
    missing = parser_commands() - commands_in_readme(README.read_text())
    assert not missing, f"README's command-line section lacks: {sorted(missing)}"


def test_install_extras_exist():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = set(re.findall(r"""pip install (?:-e )?["']?\.\[([\w,-]+)\]""", README.read_text()))
    named = {e for group in named for e in group.split(",")}
    assert named and named <= extras, f"README installs extras pyproject lacks: {sorted(named - extras)}"


def test_fresh_machine_commands_match_ci():
    """The two commands for a fresh machine: the main job, and .ci/run, whose steps the README lists."""
    text = README.read_text()
    assert "python3 -m pip install -e . && python3 -m vkncnn.tools.digits" in text
    assert "```sh\n.ci/run\n```" in text
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = [ln for ln in ci.splitlines() if ln.startswith("python3 -m pytest")]
    assert test_command == ["python3 -m pytest -q -ra -n auto --maxprocesses=4"]
    assert f"`{test_command[0]}`" in text
    for step in ["libvulkan1 mesa-vulkan-drivers vulkan-validationlayers", 'pip install -q -e ".[test]"',
                 "VKNCNN_REQUIRE_GPU=1"]:
        assert step in ci


def test_relative_links_resolve():
    """Every relative link of the README, docs/, examples/ and the changelog names a file that exists."""
    pages = [README, ROOT / "CHANGELOG.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            path = target.split("#")[0]
            if not path or re.match(r"[a-z]+:", path):
                continue  # an anchor on the same page, or a URL
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
