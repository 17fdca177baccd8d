"""The runtime's import structure (docs/architecture.md), checked statically with ast.

- No import cycles between runtime modules, counting every import statement, at module
  level or inside a function; none between the GPU packages either (compiler, vulkan, ops:
  gpu/ops/ use gpu/vulkan/ and gpu/compiler/, never the other way).
- An import inside a function says why it must be lazy: a comment starting `# lazy:` on
  its line or the line above.
- The runtime never imports the developer tools (vkncnn.tools).
- Nothing in vkncnn/gpu/ touches a private attribute of an object it is handed (only
  self's, cls's and its own module's names).
- `import vkncnn`, and importing any vkncnn.gpu module, loads no Vulkan loader.

The runtime is what pyproject.toml installs under `vkncnn`, less vkncnn.tools and
vkncnn/__main__.py (`python -m vkncnn`, the command's entry point, which nothing imports):
vkncnn/, cpu_fallback/ (vkncnn.cpu_fallback) and shaders/ (vkncnn.shaders).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# package name -> its folder, as pyproject.toml's package-dir maps them
RUNTIME_PACKAGES = {"vkncnn": ROOT / "vkncnn", "vkncnn.cpu_fallback": ROOT / "cpu_fallback",
                    "vkncnn.shaders": ROOT / "shaders"}
TOOLS = "vkncnn.tools"
ENTRY_POINT = "vkncnn.__main__"  # runs the tools' command line; not imported by the runtime
GPU_PACKAGES = ("vkncnn.gpu.compiler", "vkncnn.gpu.ops", "vkncnn.gpu.vulkan")
Edges = dict[str, dict[str, set[tuple[str, int, str]]]]  # node -> node -> {(file, line, what)}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool

    @property
    def where(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Import:
    source: Module
    target: str  # the module the statement runs (a runtime module, or what it names outside)
    line: int
    in_function: bool


@cache
def runtime_modules() -> dict[str, Module]:
    modules = {}
    for package, folder in RUNTIME_PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join([package, *parts])
            if name == TOOLS or name.startswith(TOOLS + ".") or name == ENTRY_POINT:
                continue
            modules[name] = Module(name, path, is_package)
    return modules


@cache
def source_lines(module: Module) -> list[str]:
    return module.path.read_text(encoding="utf-8").splitlines()


@cache
def parsed(module: Module) -> ast.Module:
    return ast.parse("\n".join(source_lines(module)), str(module.path))


def _function_nodes(tree: ast.Module) -> set[int]:
    """ids of the import statements that run inside a function (at any depth)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return inside


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the import statements under `if TYPE_CHECKING:`: read by type checkers, never run."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                skipped.update(id(n) for n in ast.walk(statement) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return skipped


def _resolve(module: Module, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement runs: a submodule where `from p import x` names one.

    The parent packages that Python runs first are not counted: each module's package runs
    before it, so those edges would put every package in a cycle with its own modules."""
    modules = runtime_modules()
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.name if module.is_package else module.name.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]


def _runtime_target(name: str) -> str | None:
    """The runtime module `name` runs: itself, or its closest enclosing runtime package."""
    modules = runtime_modules()
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def imports() -> tuple[Import, ...]:
    found = []
    for module in runtime_modules().values():
        tree = parsed(module)
        in_function, never_run = _function_nodes(tree), _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in never_run:
                for target in _resolve(module, node):
                    found.append(Import(module, target, node.lineno, id(node) in in_function))
    return tuple(found)


def _cycles(edges: Edges) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, components, counter = {}, {}, set(), [], [], [0]

    def visit(root: str) -> None:
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def _add_edge(edges: Edges, source: str, dest: str, imp: Import, target: str) -> None:
    edges.setdefault(source, {}).setdefault(dest, set()).add(
        (imp.source.where, imp.line, f"{imp.source.name} imports {target}"))


def _cycle_report(edges: Edges) -> list[str]:
    report = []
    for component in _cycles(edges):
        members = set(component)
        lines = sorted(f for source in component for dest, found in edges.get(source, {}).items()
                       if dest in members for f in found)
        report.append(f"import cycle between {', '.join(component)}:\n" +
                      "\n".join(f"    {where}:{line}: {what}" for where, line, what in lines))
    return report


def test_no_import_cycles():
    edges: Edges = {}
    for imp in imports():
        target = _runtime_target(imp.target)
        if target is not None and target != imp.source.name:
            _add_edge(edges, imp.source.name, target, imp, target)
    report = _cycle_report(edges)
    assert not report, "\n".join(report)


def _gpu_package(name: str) -> str:
    return next((p for p in GPU_PACKAGES if name == p or name.startswith(p + ".")), name)


def test_no_import_cycles_between_gpu_packages():
    edges: Edges = {}
    for imp in imports():
        target = _runtime_target(imp.target)
        source, dest = _gpu_package(imp.source.name), _gpu_package(target or "")
        if target is not None and source != dest and {source, dest} <= set(GPU_PACKAGES):
            _add_edge(edges, source, dest, imp, target)
    report = _cycle_report(edges)
    assert not report, "\n".join(report)


def _says_lazy(lines: list[str], line: int) -> bool:
    """`# lazy:` in a comment on the statement's first line, or opening the line above."""
    here = lines[line - 1]
    above = lines[line - 2].strip() if line >= 2 else ""
    return "# lazy:" in here or above.startswith("# lazy:")


def test_function_level_imports_say_why_they_are_lazy():
    unexplained = sorted({(imp.source.where, imp.line, imp.target) for imp in imports()
                          if imp.in_function and not _says_lazy(source_lines(imp.source), imp.line)})
    assert not unexplained, "imports inside functions without a `# lazy: <why>` comment (hoist them to " \
        "the top of the module unless they must stay lazy):\n" + \
        "\n".join(f"{where}:{line}: import of {target}" for where, line, target in unexplained)


def _names_import(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def test_runtime_does_not_import_the_tools():
    offenders = [f"{imp.source.where}:{imp.line}: imports {imp.target}" for imp in imports()
                 if imp.target == TOOLS or imp.target.startswith(TOOLS + ".")]
    for module in runtime_modules().values():  # importlib.import_module("vkncnn.tools...") too
        for node in ast.walk(parsed(module)):
            if (isinstance(node, ast.Call) and _names_import(node.func) and node.args
                    and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith(TOOLS)):
                offenders.append(f"{module.where}:{node.lineno}: imports {node.args[0].value}")
    assert not offenders, "the runtime imports developer tools:\n" + "\n".join(offenders)


def _is_private(name) -> bool:
    return isinstance(name, str) and name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_names(tree: ast.Module) -> set[str]:
    """Names the module itself defines at top level (not those it imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _own(receiver: ast.expr, own_names: set[str]) -> bool:
    if isinstance(receiver, ast.Name):
        return receiver.id in ("self", "cls") or receiver.id in own_names
    return isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"


def _private_accesses(tree: ast.Module):
    """(line, text) of every access to a private attribute of an object not the module's own:
    obj._x, getattr(obj, "_x"), obj.__dict__["_x"] / .get / .setdefault / .pop("_x")."""
    own_names = _module_names(tree)
    for node in ast.walk(tree):
        receiver = None
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            receiver = node.value
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr") \
                and _is_private(node.args[1].value):
            receiver = node.args[0]
        else:
            key, mapping = None, None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                key, mapping = node.slice.value, node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and isinstance(node.args[0], ast.Constant):
                key, mapping = node.args[0].value, node.func.value
            if _is_private(key) and isinstance(mapping, ast.Attribute) and mapping.attr == "__dict__":
                receiver = mapping.value
        if receiver is not None and not _own(receiver, own_names):
            yield node.lineno, ast.unparse(node)


def test_gpu_reads_no_private_attribute_of_what_it_is_handed():
    gpu = ROOT / "vkncnn" / "gpu"
    found = [f"{module.where}:{line}: {text}" for module in runtime_modules().values()
             if gpu in module.path.parents for line, text in _private_accesses(parsed(module))]
    assert not found, ("vkncnn/gpu/ touches private attributes of objects it does not own "
                       "(give them public names):\n" + "\n".join(found))


# Run in a fresh interpreter: notes where the `vulkan` binding is first imported from.
_IMPORT_PROBE = """
import importlib, os, pkgutil, sys, traceback

class Probe:
    first = None
    def find_spec(self, name, path=None, target=None):
        if Probe.first is None and name.split(".")[0] == "vulkan":
            frames = [f for f in traceback.extract_stack()[:-1] if f.filename.endswith(".py")]
            Probe.first = "\\n".join(f"    {os.path.relpath(f.filename)}:{f.lineno}: {f.line}" for f in frames)
        return None

sys.meta_path.insert(0, Probe())
import vkncnn
print("after import vkncnn:", "vulkan" in sys.modules)
if Probe.first: print(Probe.first)
import vkncnn.gpu
for info in pkgutil.walk_packages(vkncnn.gpu.__path__, "vkncnn.gpu."):
    importlib.import_module(info.name)
print("after every vkncnn.gpu module:", "vulkan" in sys.modules)
if Probe.first: print(Probe.first)
"""


def test_import_loads_no_vulkan():
    run = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert "after import vkncnn: False" in run.stdout, \
        "`import vkncnn` imported the `vulkan` binding (it dlopens libvulkan); imported from:\n" + run.stdout
    assert "after every vkncnn.gpu module: False" in run.stdout, \
        "importing a vkncnn.gpu module imported the `vulkan` binding; imported from:\n" + run.stdout
