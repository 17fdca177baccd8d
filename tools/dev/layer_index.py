"""Write docs/layers.md: every ncnn layer type with its module, numpy kernels, shaders and tests.

    python -m vkncnn.tools.dev.layer_index           # (re)write docs/layers.md
    python -m vkncnn.tools.dev.layer_index --check   # exit 1 if docs/layers.md is stale

Everything in the index is derived from the code each run; nothing is listed by hand.
Files are located through the modules themselves (importlib specs, classes' modules), so
moving a module into another folder only changes what the index says.

How each column is found:

- Type, layer module and class: the layer registry (`create_layer` fills it); ncnn's type
  names without an implementation come from `vkncnn.layer_types.LAYER_TYPE_NAMES`.
- GPU: `support_vulkan`, `support_vulkan_packing` and `support_vulkan_any_packing` of a
  freshly created instance (flags that load_param changes later are not seen).
- The other columns come from a static walk (ast) of the code the layer class can reach:
  its class body and its base classes except `Layer` itself, then every top-level function,
  class or module-level assignment that reached code names, directly (`helper(...)`) or
  through a module (`rows.RowReducer(...)`, `from ..cpu_fallback import norm`), across the
  vkncnn package. A class counts as one unit: reaching it reaches all its methods. The
  runtime objects `vkncnn.gpu` exports (`__all__`: VkCompute, VkMat, Pipeline, ...) serve
  every layer alike, so the walk does not go inside them. Heuristic, so it can be wrong
  both ways: a call through an object built elsewhere (`cmd.record_clone`,
  `vkdev.convert_packing`) is not followed, and every branch of reached code counts, used
  or not for a given shape (the convolutions list all the shaders `record_conv` can choose).
- numpy kernels: the functions and classes of `vkncnn.cpu_fallback` modules that the reached
  non-GPU code names (the walk stops at the kernel: what kernels call is not listed).
- Shaders: the built-in shader names (shaders/*.comp stems and manifest aliases, from the
  shader registry) written in reached code as strings that flow into a shader-name slot:
  the first argument of a `.create(...)` call (Pipeline.create), or a parameter or `self`
  attribute that ends up there (`shader_pipeline(vkdev, "gemm", ...)`,
  `ShaderVariants(vkdev, "unaryop", ...)`), followed through locals, conditional
  expressions, literals and module constants. A string compared or passed elsewhere
  (`path == "gemm"`) does not count. Shown as the .comp file the name compiles.
- GPU recorders: the `vkncnn.gpu` modules (any depth, the Vulkan machinery in
  `vkncnn.gpu.vulkan` aside) whose reached code writes one of those shader names or makes a
  pipeline (`shader_pipeline`, `Pipeline`). None listed: the layer module makes its own.
- Params: integer ids of `get`, `get_int_array`, `get_float_array` and `has` calls on a
  parameter of load_param (resolved through the class's MRO) and of the helpers it calls
  with that parameter; an id passed in as an argument is followed when the caller gives a
  constant or a class attribute. An id the walk cannot resolve shows as `?`.
- Tests: tests/**/test_<type>.py and test_<type>_*.py first, then up to three other files
  under tests/ that mention the type as a quoted string ("Softmax") or as the type of a
  .param layer line, those with the most mentions first.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import vkncnn
from vkncnn import cpu_fallback, gpu
from vkncnn.gpu.compiler.registry import builtin_shaders
from vkncnn.gpu.vulkan.pipeline import Pipeline, shader_pipeline
from vkncnn.layer import LAYER_REGISTRY, Layer, create_layer
from vkncnn.layer_types import LAYER_TYPE_NAMES

COMMAND = "python3 -m vkncnn.tools.dev.layer_index"
PARAM_GETTERS = {"get", "get_int_array", "get_float_array", "has"}
OTHER_TESTS = 3
_QUOTED_RE = re.compile(r"""(["'])([A-Za-z][A-Za-z0-9_]*)\1""")
_PARAM_LINE_RE = re.compile(r"^\s*([A-Z][A-Za-z0-9]*)\s+\S+\s+\d+\s+\d+", re.M)


def repo_root() -> Path:
    """The checkout holding the vkncnn package (the first folder up with a pyproject.toml)."""
    here = Path(vkncnn.__file__).resolve().parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    raise SystemExit(f"layer_index: no pyproject.toml above {here}; run it from an editable install")


# -- the module index: ast of every vkncnn module, names resolved through imports -------------
Ref = tuple  # ("module", name) or ("symbol", module, top-level name)


@dataclass
class ModuleInfo:
    name: str
    path: Path
    is_package: bool
    defs: dict[str, ast.AST] = field(default_factory=dict)
    imports: dict[str, tuple] = field(default_factory=dict)
    tree: ast.Module | None = None


def _absolute_base(info: ModuleInfo, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = info.name if info.is_package else info.name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _top_level_defs(body: list, out: dict) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out[name.id] = stmt
        elif isinstance(stmt, (ast.If, ast.Try)):
            _top_level_defs(stmt.body, out)
            _top_level_defs(stmt.orelse, out)


class ModuleIndex:
    def __init__(self, root_package: str) -> None:
        self.root_package = root_package
        self._modules: dict[str, ModuleInfo | None] = {}
        self._resolved: dict[tuple, Ref | None] = {}

    def in_package(self, name: str) -> bool:
        return name == self.root_package or name.startswith(self.root_package + ".")

    def module(self, name: str) -> ModuleInfo | None:
        """The parsed module `name`, None when it is not a vkncnn module with Python source."""
        if name in self._modules:
            return self._modules[name]
        info = None
        if self.in_package(name):
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                path = Path(spec.origin).resolve()
                info = ModuleInfo(name, path, spec.submodule_search_locations is not None)
                info.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
                _top_level_defs(info.tree.body, info.defs)
                for node in ast.walk(info.tree):  # function-local imports count too
                    if isinstance(node, ast.Import):
                        for alias in node.names:
                            if alias.asname:
                                info.imports[alias.asname] = ("module", alias.name)
                            else:
                                top = alias.name.split(".")[0]
                                info.imports[top] = ("module", top)
                    elif isinstance(node, ast.ImportFrom):
                        base = _absolute_base(info, node)
                        for alias in node.names:
                            info.imports[alias.asname or alias.name] = ("from", base, alias.name)
        self._modules[name] = info
        return info

    def resolve_name(self, module: str, name: str, depth: int = 0) -> Ref | None:
        key = (module, name)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = None  # a cycle of re-exports resolves to nothing
        result = self._resolve_name(module, name, depth)
        self._resolved[key] = result
        return result

    def _resolve_name(self, module: str, name: str, depth: int) -> Ref | None:
        info = self.module(module)
        if info is None or depth > 20:
            return None
        if name in info.defs:
            return ("symbol", module, name)
        imported = info.imports.get(name)
        if imported is None:
            return None
        if imported[0] == "module":
            return ("module", imported[1]) if self.module(imported[1]) else None
        return self.resolve_from(imported[1], imported[2], depth + 1)

    def resolve_from(self, base: str, attr: str, depth: int = 0) -> Ref | None:
        """What `from base import attr` (or `base.attr`) names."""
        if not self.in_package(base):
            return None
        # the package's own binding wins over a submodule of the same name, as in Python
        found = self.resolve_name(base, attr, depth)
        if found is not None:
            return found
        if self.module(f"{base}.{attr}") is not None:
            return ("module", f"{base}.{attr}")
        return self._introspect(base, attr)

    def _introspect(self, base: str, attr: str) -> Ref | None:
        """Names a module makes at run time (a lazy __getattr__): ask the imported module."""
        try:
            obj = getattr(importlib.import_module(base), attr)
        except Exception:  # noqa: BLE001 - anything the import raises means "not resolvable"
            return None
        if inspect.ismodule(obj):
            return ("module", obj.__name__) if self.module(obj.__name__) else None
        owner, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if owner and qualname and self.module(owner) is not None:
            return ("symbol", owner, qualname.split(".")[0])
        return None

    def resolve_expr(self, module: str, node: ast.AST) -> Ref | None:
        if isinstance(node, ast.Name):
            return self.resolve_name(module, node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve_expr(module, node.value)
            if base is None:
                return None
            if base[0] == "module":
                return self.resolve_from(base[1], node.attr)
            return base  # an attribute of a class or function stays within that unit
        return None

    def node(self, ref: Ref) -> ast.AST | None:
        info = self.module(ref[1])
        return info.defs.get(ref[2]) if info is not None else None

    def function_node(self, func) -> tuple[str, ast.AST] | None:
        """(module, FunctionDef) of a function object, found by its qualified name."""
        owner, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
        info = self.module(owner) if owner else None
        if info is None or "<" in qualname:
            return None
        node: ast.AST | None = None
        scope = info.defs
        for part in qualname.split("."):
            node = scope.get(part)
            if node is None:
                return None
            scope = {s.name: s for s in getattr(node, "body", [])
                     if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        return (owner, node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _code_nodes(node: ast.AST):
    """The nodes of a unit, docstrings and other bare string statements left out."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                continue
            stack.append(child)


def _class_ref(cls) -> Ref:
    return ("symbol", cls.__module__, cls.__qualname__.split(".")[0])


# -- which string constants reach a shader-name slot ------------------------------------------
@dataclass(eq=False)
class FuncCtx:
    """A function with what its names mean: its module, its class (for self.x), its outer function."""
    module: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ast.ClassDef | None = None
    cls_module: str = ""
    outer: FuncCtx | None = None


@dataclass
class Flow:
    params: set[str] = field(default_factory=set)   # parameters whose value becomes a shader name
    attrs: set[str] = field(default_factory=set)    # self.<attr> whose value becomes a shader name
    hits: set[str] = field(default_factory=set)     # shader names written in this function


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _own_nodes(func: ast.AST):
    """A function's nodes, nested functions and classes left out (they are analysed on their own)."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _param_names(func: ast.AST) -> list[str]:
    args = func.args
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


class ShaderFlow:
    """A small data-flow pass: a string is a shader name when it flows into the first argument
    of a `.create(...)` call (Pipeline.create) or into a parameter or attribute that does,
    through locals, conditional expressions, literals and module constants."""

    def __init__(self, index: ModuleIndex, names: set[str]) -> None:
        self.index = index
        self.names = names
        self._base: dict[int, Flow] = {}
        self._full: dict[int, Flow] = {}
        self._class_attrs: dict[int, set[str]] = {}
        self._nodes: dict[int, list[ast.AST]] = {}

    def own(self, func: ast.AST) -> list[ast.AST]:
        """_own_nodes, kept per function: the walk asks for the same functions many times."""
        key = id(func)
        if key not in self._nodes:
            self._nodes[key] = list(_own_nodes(func))
        return self._nodes[key]

    # ---- finding the function a call runs
    def _method(self, module: str, cls: ast.ClassDef, name: str, depth: int = 0):
        for stmt in cls.body:
            if isinstance(stmt, _FUNCS) and stmt.name == name:
                return FuncCtx(module, stmt, cls, module)
        for base in cls.bases if depth < 10 else []:
            ref = self.index.resolve_expr(module, base)
            node = self.index.node(ref) if ref and ref[0] == "symbol" else None
            if isinstance(node, ast.ClassDef):
                found = self._method(ref[1], node, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _symbol_callee(self, ref) -> tuple[FuncCtx | None, bool]:
        node = self.index.node(ref) if ref and ref[0] == "symbol" else None
        if isinstance(node, _FUNCS):
            return FuncCtx(ref[1], node), False
        if isinstance(node, ast.ClassDef):
            return self._method(ref[1], node, "__init__"), True
        return None, False

    def callee(self, ctx: FuncCtx, call: ast.Call) -> tuple[FuncCtx | None, bool]:
        """(the function called, whether its first parameter is bound: self)."""
        func = call.func
        if isinstance(func, ast.Name):
            scope = ctx
            while scope is not None:
                for node in self.own(scope.node):
                    if isinstance(node, _FUNCS) and node.name == func.id:
                        return FuncCtx(scope.module, node, scope.cls, scope.cls_module, scope), False
                scope = scope.outer
            return self._symbol_callee(self.index.resolve_name(ctx.module, func.id))
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id == "self" and ctx.cls is not None:
                return self._method(ctx.cls_module, ctx.cls, func.attr), True
            ref = self.index.resolve_expr(ctx.module, func)
            if ref and ref[0] == "symbol" and ref[2] == func.attr:
                return self._symbol_callee(ref)
        return None, False

    # ---- following values backwards
    def _flow(self, ctx: FuncCtx | None, module: str, expr: ast.AST, out: Flow, seen: set) -> None:
        key = (id(ctx.node) if ctx else module, id(expr))
        if key in seen:
            return
        seen.add(key)
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str) and expr.value in self.names:
                out.hits.add(expr.value)
        elif isinstance(expr, ast.IfExp):
            self._flow(ctx, module, expr.body, out, seen)
            self._flow(ctx, module, expr.orelse, out, seen)
        elif isinstance(expr, ast.BoolOp):
            for value in expr.values:
                self._flow(ctx, module, value, out, seen)
        elif isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            for value in expr.elts:
                self._flow(ctx, module, value, out, seen)
        elif isinstance(expr, ast.Dict):
            for value in expr.values:
                self._flow(ctx, module, value, out, seen)
        elif isinstance(expr, ast.Subscript):
            self._flow(ctx, module, expr.value, out, seen)
        elif isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                out.attrs.add(expr.attr)
            else:
                self._flow_symbol(self.index.resolve_expr(module, expr), out, seen)
        elif isinstance(expr, ast.Name):
            self._flow_name(ctx, module, expr.id, out, seen)

    def _flow_name(self, ctx: FuncCtx | None, module: str, name: str, out: Flow, seen: set) -> None:
        scope = ctx
        while scope is not None:
            local = False
            for node in self.own(scope.node):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if node.value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
                        local = True
                        self._flow(scope, module, node.value, out, seen)
                elif isinstance(node, (ast.For, ast.comprehension)):
                    if isinstance(node.target, ast.Name) and node.target.id == name:
                        local = True
                        self._flow(scope, module, node.iter, out, seen)
            if name in _param_names(scope.node):
                if scope is ctx:
                    out.params.add(name)
                return
            if local:
                return
            scope = scope.outer
        self._flow_symbol(self.index.resolve_name(module, name), out, seen)

    def _flow_symbol(self, ref, out: Flow, seen: set) -> None:
        node = self.index.node(ref) if ref and ref[0] == "symbol" else None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            self._flow(None, ref[1], node.value, out, seen)

    # ---- per function
    def _sinks(self, ctx: FuncCtx):
        for node in self.own(ctx.node):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr == "create" and node.args:
                yield node.args[0]
                continue
            callee, bound = self.callee(ctx, node)
            if callee is None or callee.node is ctx.node:
                continue
            wanted = self.full(callee).params
            if not wanted:
                continue
            names = [a.arg for a in callee.node.args.posonlyargs + callee.node.args.args]
            if bound:
                names = names[1:]
            for name, arg in zip(names, node.args):
                if name in wanted:
                    yield arg
            for kw in node.keywords:
                if kw.arg in wanted:
                    yield kw.value

    def base(self, ctx: FuncCtx) -> Flow:
        key = id(ctx.node)
        if key not in self._base:
            self._base[key] = Flow()  # a recursive call sees no flow
            out, seen = Flow(), set()
            for expr in self._sinks(ctx):
                self._flow(ctx, ctx.module, expr, out, seen)
            self._base[key] = out
        return self._base[key]

    def class_attrs(self, module: str, cls: ast.ClassDef) -> set[str]:
        key = id(cls)
        if key not in self._class_attrs:
            self._class_attrs[key] = set()
            attrs: set[str] = set()
            for stmt in cls.body:
                if isinstance(stmt, _FUNCS):
                    attrs |= self.base(FuncCtx(module, stmt, cls, module)).attrs
            self._class_attrs[key] = attrs
        return self._class_attrs[key]

    def full(self, ctx: FuncCtx) -> Flow:
        """base, plus `self.x = value` where some method of the class uses self.x as a shader name."""
        key = id(ctx.node)
        if key in self._full:
            return self._full[key]
        self._full[key] = Flow()
        base = self.base(ctx)
        out = Flow(set(base.params), set(base.attrs), set(base.hits))
        if ctx.cls is not None:
            attrs = self.class_attrs(ctx.cls_module, ctx.cls)
            seen: set = set()
            for node in self.own(ctx.node):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                           and t.attr in attrs for t in targets):
                        self._flow(ctx, ctx.module, node.value, out, seen)
        self._full[key] = out
        return out

    def unit_hits(self, ref) -> set[str]:
        """Shader names written in the functions of one top-level unit."""
        node = self.index.node(ref)
        hits: set[str] = set()

        def visit(body_owner: ast.AST, cls, outer) -> None:
            for child in ast.iter_child_nodes(body_owner):
                if isinstance(child, _FUNCS):
                    ctx = FuncCtx(ref[1], child, cls, ref[1] if cls is not None else "", outer)
                    hits.update(self.full(ctx).hits)
                    visit(child, cls, ctx)
                elif isinstance(child, ast.ClassDef):
                    visit(child, child, None)
                elif not isinstance(child, ast.Lambda):
                    visit(child, cls, outer)

        if isinstance(node, _FUNCS):
            ctx = FuncCtx(ref[1], node)
            hits.update(self.full(ctx).hits)
            visit(node, None, ctx)
        elif isinstance(node, ast.ClassDef):
            visit(node, node, None)
        return hits


# -- what one layer class reaches ----------------------------------------------------------------
@dataclass
class Reach:
    kernels: dict[str, set[str]] = field(default_factory=dict)   # cpu_fallback module -> names
    shaders: set[str] = field(default_factory=set)               # built-in shader names
    recorders: set[str] = field(default_factory=set)             # gpu modules


class Analyzer:
    def __init__(self) -> None:
        self.index = ModuleIndex(vkncnn.__name__)
        self.cpu_package = cpu_fallback.__name__
        self.gpu_package = gpu.__name__
        # making a pipeline: the one factory, or the class itself
        self.pipeline_refs = {_class_ref(Pipeline), ("symbol", shader_pipeline.__module__, shader_pipeline.__name__)}
        # the Vulkan machinery makes every pipeline for the recorders: it is not a recorder itself
        self.machinery_package = Pipeline.__module__.rsplit(".", 1)[0]
        # The runtime objects the GPU package exports (VkCompute, VkMat, Pipeline, ...) serve
        # every layer alike: the walk notes references to them but does not go inside.
        self.runtime = {ref for name in getattr(gpu, "__all__", ())
                        if (ref := self.index.resolve_from(self.gpu_package, name)) is not None}
        self.shaders = builtin_shaders()
        self.shader_names = set(self.shaders.names())
        self.flow = ShaderFlow(self.index, self.shader_names)
        self._unit_cache: dict[Ref, tuple[list[Ref], set[str]]] = {}

    def in_cpu(self, module: str) -> bool:
        return module == self.cpu_package or module.startswith(self.cpu_package + ".")

    def in_gpu(self, module: str) -> bool:
        return module == self.gpu_package or module.startswith(self.gpu_package + ".")

    def in_machinery(self, module: str) -> bool:
        return module == self.machinery_package or module.startswith(self.machinery_package + ".")

    def shader_file(self, name: str) -> Path:
        """The .comp file a built-in shader name compiles (an alias names its file's stem)."""
        stem = name if (self.shaders.dir / f"{name}.comp").is_file() else self.shaders.aliases()[name][0]
        return (self.shaders.dir / f"{stem}.comp").resolve()

    def unit(self, ref: Ref) -> tuple[list[Ref], set[str]]:
        """(symbols it names, shader names it passes to a pipeline) of one unit."""
        if ref in self._unit_cache:
            return self._unit_cache[ref]
        node = self.index.node(ref)
        refs: list[Ref] = []
        strings: set[str] = set()
        if node is not None:
            seen: set[Ref] = set()
            strings = self.flow.unit_hits(ref)
            for sub in _code_nodes(node):
                if isinstance(sub, (ast.Name, ast.Attribute)):
                    target = self.index.resolve_expr(ref[1], sub)
                    if target is not None and target[0] == "symbol" and target != ref and target not in seen:
                        seen.add(target)
                        refs.append(target)
        self._unit_cache[ref] = (refs, strings)
        return refs, strings

    def reach(self, cls) -> Reach:
        out = Reach()
        start = [_class_ref(c) for c in cls.__mro__
                 if c is not Layer and c is not object and self.index.in_package(c.__module__)]
        todo = list(dict.fromkeys(start))
        seen = set(todo)
        per_module: dict[str, tuple[set[str], bool]] = {}
        while todo:
            ref = todo.pop()
            refs, strings = self.unit(ref)
            module = ref[1]
            makes = not self.pipeline_refs.isdisjoint(refs)
            if self.in_gpu(module) and not self.in_machinery(module):
                names, made = per_module.get(module, (set(), False))
                per_module[module] = (names | strings, made or makes)
            out.shaders |= strings
            for target in refs:
                if self.in_cpu(target[1]):
                    if not self.in_gpu(module) and self._is_kernel(target):
                        out.kernels.setdefault(target[1], set()).add(target[2])
                    continue
                if target not in seen and target not in self.runtime:
                    seen.add(target)
                    todo.append(target)
        out.recorders = {m for m, (names, made) in per_module.items() if names or made}
        return out

    @staticmethod
    def _is_kernel(ref: Ref) -> bool:
        try:
            obj = getattr(importlib.import_module(ref[1]), ref[2])
        except Exception:  # noqa: BLE001
            return False
        return inspect.isfunction(obj) or inspect.isclass(obj)

    # -- param ids ------------------------------------------------------------------------
    def param_ids(self, cls) -> tuple[list[int], bool]:
        """(sorted ids load_param reads, whether some id could not be resolved)."""
        ids: set[int] = set()
        unknown = [False]
        load = getattr(cls, "load_param", None)
        if load is None or load is Layer.load_param:
            return [], False
        found = self.index.function_node(load)
        if found is not None:
            self._walk_params(cls, found[0], found[1], {}, ids, unknown, set(), 0)
        return sorted(ids), unknown[0]

    def _value(self, cls, expr: ast.AST, env: dict):
        """An argument's value when the walk can know it: a constant, a known name, a class attribute."""
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name) and expr.id in env:
            return env[expr.id]
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            value = getattr(cls, expr.attr, _UNKNOWN)
            return value if value is None or isinstance(value, int) else _UNKNOWN
        return _UNKNOWN

    def _callee(self, cls, module: str, func_node: ast.AST, call: ast.Call):
        """The (module, FunctionDef) a call inside load_param's closure runs, if it is ours."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return self.index.function_node(getattr(cls, func.attr, None))
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            owner = _owner_class(cls, module, func_node)
            mro = list(cls.__mro__)
            if owner in mro:
                for base in mro[mro.index(owner) + 1:]:
                    if func.attr in base.__dict__:
                        return self.index.function_node(base.__dict__[func.attr])
            return None
        target = self.index.resolve_expr(module, func)
        if target is None or target[0] != "symbol":
            return None
        node = self.index.node(target)
        return (target[1], node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def _walk_params(self, cls, module, node, env, ids, unknown, visiting, depth) -> None:
        key = (id(node), tuple(sorted((k, repr(v)) for k, v in env.items())))
        if key in visiting or depth > 8:
            return
        visiting.add(key)
        args = node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        receivers = {p for p in params if p != "self"}
        for sub in _code_nodes(node):
            if not isinstance(sub, ast.Call):
                continue
            func = sub.func
            if (isinstance(func, ast.Attribute) and func.attr in PARAM_GETTERS and isinstance(func.value, ast.Name)
                    and func.value.id in receivers and sub.args):
                key_value = self._value(cls, sub.args[0], env)
                if isinstance(key_value, int) and not isinstance(key_value, bool):
                    ids.add(key_value)
                elif key_value is _UNKNOWN:
                    unknown[0] = True
                continue
            callee = self._callee(cls, module, node, sub)
            if callee is None:
                continue
            callee_args = callee[1].args
            names = [a.arg for a in callee_args.posonlyargs + callee_args.args]
            bound_self = isinstance(func, ast.Attribute) and (
                isinstance(func.value, ast.Call) or (isinstance(func.value, ast.Name) and func.value.id == "self"))
            if bound_self and names and names[0] == "self":
                names = names[1:]
            new_env = {}
            for name, arg in zip(names, sub.args):
                new_env[name] = self._value(cls, arg, env)
            for kw in sub.keywords:
                if kw.arg:
                    new_env[kw.arg] = self._value(cls, kw.value, env)
            self._walk_params(cls, callee[0], callee[1], {k: v for k, v in new_env.items() if v is not _UNKNOWN},
                              ids, unknown, visiting, depth + 1)


_UNKNOWN = object()


def _owner_class(cls, module: str, func_node: ast.AST):
    """The class in cls's MRO whose body defines func_node (for super() calls)."""
    for base in cls.__mro__:
        if base.__module__ != module:
            continue
        for value in base.__dict__.values():
            code = getattr(value, "__code__", None)
            if code is not None and code.co_firstlineno in _def_lines(func_node):
                return base
    return None


def _def_lines(node: ast.AST) -> set[int]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return {first, node.lineno}


# -- tests ----------------------------------------------------------------------------------------
def scan_tests(tests_dir: Path) -> dict[Path, Counter]:
    """Per test file, how often each capitalised word appears as a type name."""
    out: dict[Path, Counter] = {}
    for path in sorted(tests_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        counts = Counter(m.group(2) for m in _QUOTED_RE.finditer(text))
        counts.update(m.group(1) for m in _PARAM_LINE_RE.finditer(text))
        out[path] = counts
    return out


def tests_for(type_name: str, scanned: dict[Path, Counter]) -> list[Path]:
    lower = type_name.lower()
    dedicated = sorted((p for p in scanned if p.stem == f"test_{lower}"), key=str)
    dedicated += sorted((p for p in scanned if p.stem.startswith(f"test_{lower}_")), key=str)
    others = [(-counts[type_name], str(p), p) for p, counts in scanned.items()
              if counts[type_name] and p not in dedicated]
    return dedicated + [p for _, _, p in sorted(others)[:OTHER_TESTS]]


# -- the document ---------------------------------------------------------------------------------
@dataclass
class Row:
    type_name: str
    implemented: bool
    module_path: Path | None = None
    class_name: str = ""
    kernels: list[tuple[Path, list[str]]] = field(default_factory=list)
    shaders: list[Path] = field(default_factory=list)
    recorders: list[Path] = field(default_factory=list)
    tests: list[Path] = field(default_factory=list)
    gpu: str = "no"
    params: str = ""


def collect(root: Path) -> list[Row]:
    analyzer = Analyzer()
    scanned = scan_tests(root / "tests")
    create_layer("Input")  # fills the registry
    # built-ins only: a custom layer registered at run time (a test's) is not part of vkncnn
    builtin = {name: cls for name, cls in LAYER_REGISTRY.items() if analyzer.index.in_package(cls.__module__)}
    rows = []
    for type_name in sorted(set(builtin) | set(LAYER_TYPE_NAMES), key=str.lower):
        cls = builtin.get(type_name)
        if cls is None:
            rows.append(Row(type_name, False, tests=tests_for(type_name, scanned)))
            continue
        layer = create_layer(type_name)
        reach = analyzer.reach(cls)
        ids, unknown = analyzer.param_ids(cls)
        module_file = lambda name: analyzer.index.module(name).path  # noqa: E731
        flags = [label for label, on in (("pack4", layer.support_vulkan_packing),
                                         ("any packing", layer.support_vulkan_any_packing)) if on]
        rows.append(Row(
            type_name, True,
            module_path=module_file(cls.__module__),
            class_name=cls.__qualname__,
            kernels=sorted((module_file(m), sorted(names)) for m, names in reach.kernels.items()),
            shaders=sorted({analyzer.shader_file(s) for s in reach.shaders}),
            recorders=sorted(module_file(m) for m in reach.recorders),
            tests=tests_for(type_name, scanned),
            gpu=("yes" + (f" ({', '.join(flags)})" if flags else "")) if layer.support_vulkan else "no",
            params=" ".join(str(i) for i in ids) + (" ?" if unknown else ""),
        ))
    return rows


def render(rows: list[Row], root: Path, all_shaders: list[Path]) -> str:
    docs = root / "docs"

    def rel(path: Path) -> str:
        return path.resolve().relative_to(root).as_posix()

    def link(path: Path) -> str:
        return f"[{rel(path)}]({Path(os.path.relpath(path.resolve(), docs)).as_posix()})"

    implemented = [r for r in rows if r.implemented]
    with_shader = [r for r in implemented if r.shaders]
    on_gpu = [r for r in implemented if r.gpu != "no"]
    lines = [
        "# Layer index",
        "",
        f"Generated by `{COMMAND}` from the code; do not edit by hand. Run that command after adding,",
        f"moving or renaming a layer, kernel, shader or test (`{COMMAND} --check` tells whether this",
        "file is current; the test suite runs it).",
        "",
        f"**{len(implemented)} types implemented, {len(with_shader)} with a shader, {len(on_gpu)} run on the GPU; "
        f"{len(rows) - len(implemented)} of ncnn's types not implemented.**",
        "",
        "Columns:",
        "",
        "- **Layer**: the module registering the type, and its class.",
        "- **numpy kernels**: `cpu_fallback` functions the layer's CPU code calls (`module:function`).",
        "- **Shaders**: `shaders/*.comp` files its GPU code, or the GPU helpers it calls, name.",
        "- **GPU recorders**: `vkncnn/gpu` modules that record those shaders for it (none listed: the layer"
        " module makes its pipelines itself).",
        "- **Tests**: the dedicated test file(s), then up to three others naming the type.",
        "- **GPU**: `support_vulkan` of a new instance; pack4 = `support_vulkan_packing`,"
        " any packing = `support_vulkan_any_packing`.",
        "- **Params**: ncnn param ids `load_param` reads (`?`: an id the tool could not work out).",
        "",
        "Kernels, shaders, recorders and params come from a static walk of the code the class reaches;"
        f" the docstring of {link(Path(__file__))} says how, and what it can miss.",
        "",
        "| Type | Layer | numpy kernels | Shaders | GPU recorders | Tests | GPU | Params |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tests = "<br>".join(link(p) for p in r.tests)
        if not r.implemented:
            lines.append(f"| {r.type_name} | *not implemented* |  |  |  | {tests} | no |  |")
            continue
        kernels = "<br>".join(f"{link(p)}: {', '.join(names)}" for p, names in r.kernels)
        cells = [
            r.type_name,
            f"{link(r.module_path)}<br>`{r.class_name}`",
            kernels,
            "<br>".join(link(p) for p in r.shaders),
            "<br>".join(link(p) for p in r.recorders),
            tests,
            r.gpu,
            r.params,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    used = {p for r in rows for p in r.shaders}
    unused = [p for p in all_shaders if p not in used]
    if unused:
        lines += ["", "Shaders no layer names (the runtime's own, or reached only in ways the walk does not follow): "
                  + ", ".join(link(p) for p in unused) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vkncnn.tools.dev.layer_index", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/layers.md is not what would be written")
    args = parser.parse_args(argv)
    root = repo_root()
    target = root / "docs" / "layers.md"
    shaders = builtin_shaders()
    text = render(collect(root), root, [(shaders.dir / f"{stem}.comp").resolve() for stem in shaders.stems()])
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current == text:
            return 0
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), "docs/layers.md (on disk)",
                                         "docs/layers.md (from the code)", n=0, lineterm=""))
        shown = [line[:160] for line in diff[:24]]
        print("\n".join(shown) + (f"\n... {len(diff) - len(shown)} more diff lines" if len(diff) > len(shown) else ""))
        print(f"docs/layers.md is stale: run `{COMMAND}`")
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target.relative_to(root).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
