"""docs/environment.md lists every environment variable the runtime and the tools read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ["vkncnn", "tools", "cpu_fallback"]
# os.environ.get("X"), os.environ["X"], os.environ.setdefault("X"), os.getenv("X"), and any
# VKNCNN_* name written anywhere in the code (loops over names, messages)
ENV_READ = re.compile(r"""(?:environ(?:\.get|\.setdefault|\.pop)?\s*[\(\[]|getenv\s*\()\s*["']([A-Z][A-Z0-9_]*)["']""")
OWN_NAME = re.compile(r"""["'](VKNCNN_[A-Z0-9_]+)["']""")
# names in a tuple that the code walks to read or set each (e.g. `for var in ("A", "B")`)
NAME_TUPLE = re.compile(r"""\(\s*((?:["'][A-Z][A-Z0-9_]*_[A-Z0-9_]+["']\s*,\s*)+["'][A-Z][A-Z0-9_]*["']\s*,?\s*)\)""")


def names_in_code() -> dict[str, str]:
    found: dict[str, str] = {}
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text()
            if "environ" not in text and "getenv" not in text and "VKNCNN_" not in text:
                continue
            names = set(ENV_READ.findall(text)) | set(OWN_NAME.findall(text))
            if "environ" in text:
                for group in NAME_TUPLE.findall(text):
                    names |= set(re.findall(r"[A-Z][A-Z0-9_]+", group))
            for name in names:
                found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_scan_finds_the_variables_we_know():
    found = names_in_code()
    for name in ["VKNCNN_NO_COMPILER", "VKNCNN_CACHE_DIR", "VKNCNN_DEBUG", "VK_ICD_FILENAMES", "LP_NUM_THREADS"]:
        assert name in found


def test_every_variable_is_documented():
    doc = (ROOT / "docs" / "environment.md").read_text()
    missing = {name: where for name, where in names_in_code().items() if f"`{name}`" not in doc}
    assert not missing, f"not in docs/environment.md: {missing}"
