"""Type hints on the public API (the package ships py.typed), checked statically with ast.

Every public function and method (its name does not start with `_`), and every
__init__, at any depth, annotates all of its parameters (self / cls aside, *args and
**kwargs included) and its return. The public modules are vkncnn/*.py less private
(`_name.py`) ones, and every module of vkncnn/format, vkncnn/utils, vkncnn/model_zoo and
vkncnn/llm: the private modules of those hold the bases of their public classes
(model_zoo/_base.py's ZooModel), so they count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "vkncnn"
SUBPACKAGES = ("format", "utils", "model_zoo", "llm")


def _is_private_module(path: Path) -> bool:
    return path.name.startswith("_") and not (path.stem.startswith("__") and path.stem.endswith("__"))


def public_modules() -> list[Path]:
    modules = [p for p in sorted(PACKAGE.glob("*.py")) if not _is_private_module(p)]
    for sub in SUBPACKAGES:
        modules += sorted((PACKAGE / sub).rglob("*.py"))
    return modules



def missing_annotations(source: str) -> list[str]:
    """'name:line(what is missing)' for each function the rule covers that lacks a hint."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name.startswith("_") and node.name != "__init__":
            continue
        a = node.args
        params = a.posonlyargs + a.args + a.kwonlyargs
        if params and params[0].arg in ("self", "cls"):
            params = params[1:]
        missing = [p.arg for p in params if p.annotation is None]
        if a.vararg is not None and a.vararg.annotation is None:
            missing.append("*" + a.vararg.arg)
        if a.kwarg is not None and a.kwarg.annotation is None:
            missing.append("**" + a.kwarg.arg)
        if node.returns is None:
            missing.append("->")
        if missing:
            found.append(f"{node.name}:{node.lineno}({', '.join(missing)})")
    return found


def test_rule_reports_what_is_missing():
    source = '''
def f(a, b: int, *args, c=1, **kw) -> None: ...
def g(x: int): ...
def _private(x): ...
class C:
    def __init__(self, v): ...
    def m(self, w: int) -> int: ...
    @classmethod
    def make(cls) -> "C": ...
    def _helper(self, z): ...
'''
    assert missing_annotations(source) == ["f:2(a, c, *args, **kw)", "g:3(->)", "__init__:6(v, ->)"]



def test_public_api_is_annotated():
    modules = public_modules()
    assert len(modules) > 40  # the walk finds the package (a wrong root would pass vacuously)
    report = []
    for path in modules:
        missing = missing_annotations(path.read_text(encoding="utf-8"))
        if missing:
            report.append(f"{path.relative_to(ROOT).as_posix()}: {', '.join(missing)}")
    assert not report, "public functions without complete type hints:\n" + "\n".join(report)
