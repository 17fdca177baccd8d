"""Built-in shader name -> SPIR-V bytes, and user GLSL -> SPIR-V bytes.

A built-in shader is shaders/<name>.comp. One file yields several *variants*: its precision
(the preamble, preamble.py: fp32, fp16 storage, or fp16 storage with fp16 arithmetic) times
the defines its manifest declares (`// variants: PACK4=0,1`, see source.py). `get_builtin_spirv`
looks for a variant in three places, cheapest first:

1. the SPIR-V shipped inside the package: shaders/spirv/index.json maps
   name -> variant key -> {file, source_sha256, spirv_sha256}. The entry is used only if its
   source_sha256 matches the shader text as it is now, so an edited .comp never runs stale
   SPIR-V (tools/build_spirv.py regenerates; `--check` fails CI when someone forgot);
2. the on-disk cache (spirv_cache.py);
3. the compiler (glslang.py), whose result goes to the disk cache.

With VKNCNN_NO_COMPILER=1 only step 1 is allowed, and the compiler binding is never imported.
Results are also memoised in-process, so asking twice costs a dict lookup.

Two compile targets: SPIR-V 1.3 for Vulkan 1.1 and newer (TARGET), and SPIR-V 1.0 for
Vulkan 1.0 devices (TARGET_VULKAN_1_0: fp32 storage only, the variants the manifest's
`// vulkan1.0:` line allows; spirv_target picks it from the device's API version). A variant
with no 1.0 build comes as SPIR-V 1.3, which the device guard then refuses for that kernel
alone (device_limits.KernelUnsupported: the layer runs on the CPU).

fp16 arithmetic (afp = float16_t) is a variant only of the shaders whose manifest says
`// fp16a:` (docs/gpu.md says which and why); a request for it elsewhere gets the
fp16-storage variant, whose arithmetic is fp32. It is requested when opt.use_fp16_arithmetic
and fp16 storage are on and the device has shaderFloat16 (effective_fp16_arithmetic).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ... import shaders as _shaders_pkg
from ...errors import ShaderCompileError
from ...log import logger
from . import spirv_cache
from .preamble import make_preamble
from .source import (
    TARGET,
    TARGET_VULKAN_1_0,
    ExpandedSource,
    Manifest,
    compiler_disabled,
    define_lines,
    expand_includes,
    normalize_defines,
    parse_manifest,
    rewrite_log,
    splice_after_version,
)

# vkncnn.shaders is the top-level shaders/ folder, mapped into the package (pyproject.toml).
SHADER_DIR = Path(_shaders_pkg.__file__).resolve().parent

INDEX_FORMAT = 1
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Variant:
    """One compilation of a shader file: its precision plus its defines (sorted), and the
    compile target (source.TARGET, or TARGET_VULKAN_1_0 for Vulkan 1.0 devices).

    fp16_arithmetic implies fp16_storage (the 16-bit types need both extensions)."""
    fp16_storage: bool
    defines: tuple[tuple[str, str], ...] = ()
    fp16_arithmetic: bool = False
    target: str = TARGET

    @property
    def precision(self) -> str:
        """'fp32', 'fp16s' (fp16 storage, fp32 arithmetic) or 'fp16a' (fp16 both)."""
        if self.fp16_arithmetic:
            return "fp16a"
        return "fp16s" if self.fp16_storage else "fp32"

    @property
    def key(self) -> str:
        """The precision, then ';NAME=value' per define, then '@vulkan1.0' for the SPIR-V 1.0
        build: the index.json key."""
        key = ";".join([self.precision] + [f"{k}={v}" for k, v in self.defines])
        return key + _target_suffix(self.target, "@")

    def file_name(self, stem: str) -> str:
        parts = [stem, self.precision]
        parts += [f"{k}_{re.sub(r'[^A-Za-z0-9_.]', '_', v)}" for k, v in self.defines]
        return "-".join(parts) + _target_suffix(self.target, "-") + ".spv"


def _target_suffix(target: str, sep: str) -> str:
    """'' for the default target, else e.g. '@vulkan1.0' (the environment part of the target)."""
    return "" if target == TARGET else sep + target.split("-")[0]


_API_1_1 = (1 << 22) | (1 << 12)


def spirv_target(vkdev=None) -> str:
    """The compile target for a device: SPIR-V 1.0 where it reports Vulkan 1.0 (as a device
    profile may have clamped it), else source.TARGET (also when vkdev is None)."""
    info = getattr(vkdev, "info", None)
    if callable(info):
        info = info()
    api = getattr(info, "api_version", None)
    return TARGET_VULKAN_1_0 if callable(api) and api() < _API_1_1 else TARGET


def _device_says(vkdev, feature: str, unknown: bool) -> bool:
    """The device's support_<feature>() (asked of vkdev.info, else vkdev); `unknown` where
    neither can say (a stand-in device in tests)."""
    info = getattr(vkdev, "info", None)
    if callable(info):
        info = info()
    for obj in (info, vkdev):
        probe = getattr(obj, f"support_{feature}", None)
        if probe is not None:
            return bool(probe() if callable(probe) else probe)
    return unknown


def effective_fp16_storage(opt, vkdev=None) -> bool:
    """opt.use_fp16_storage, and the device supports 16-bit storage (assumed when vkdev is None)."""
    if not getattr(opt, "use_fp16_storage", False):
        return False
    return vkdev is None or _device_says(vkdev, "fp16_storage", unknown=True)


def effective_fp16_arithmetic(opt, vkdev=None) -> bool:
    """fp16 arithmetic for these options on this device: opt.use_fp16_arithmetic with fp16
    storage in effect, and the device has shaderFloat16 (assumed when vkdev is None; a device
    object that cannot say is taken to lack it)."""
    if not getattr(opt, "use_fp16_arithmetic", False) or not effective_fp16_storage(opt, vkdev):
        return False
    return vkdev is None or _device_says(vkdev, "fp16_arithmetic", unknown=False)


def build_compiler_input(source: str, name: str, defines: dict[str, str], fp16_storage: bool,
                         fp16_arithmetic: bool, include_dirs: list[Path]) -> ExpandedSource:
    """The exact text the compiler sees (and the caches hash), plus the include file map."""
    expanded = expand_includes(source, name, include_dirs)
    block = make_preamble(fp16_storage, fp16_arithmetic) + define_lines(defines)
    return ExpandedSource(splice_after_version(expanded.text, block, name), expanded.files)


def source_hash(inp: ExpandedSource, target: str = TARGET) -> str:
    return hashlib.sha256(f"{target}\0{inp.text}".encode()).hexdigest()


_memo: dict[tuple, bytes] = {}  # user shaders compiled in this process, by source hash


def _compile_cached(inp: ExpandedSource, name: str, target: str = TARGET) -> bytes:
    """Disk cache, else compile and store. Never called with VKNCNN_NO_COMPILER set."""
    from . import glslang  # lazy: the compiler binding loads only when a shader must be compiled

    identity = glslang.compiler_identity()
    if identity and target != TARGET:
        identity = f"{identity}:{target}"
    key = spirv_cache.cache_key(inp.text, identity) if identity else None
    if key is not None:
        hit = spirv_cache.load(key)
        if hit is not None:
            logger.debug("shader %s: SPIR-V from the disk cache (%s)", name, spirv_cache.cache_dir())
            return hit
    logger.info("shader %s: compiling with %s", name, identity or "no compiler")
    try:
        spirv = glslang.compile_spirv(inp.text, name, target)
    except ShaderCompileError as exc:
        raise ShaderCompileError(rewrite_log(str(exc), inp.files)) from None
    if key is not None:
        spirv_cache.store(key, spirv)
    return spirv


class BuiltinShaders:
    """The shaders of one folder: <dir>/*.comp, <dir>/include/, <dir>/spirv/."""

    def __init__(self, shader_dir: Path) -> None:
        self.dir = Path(shader_dir)
        self.include_dir = self.dir / "include"
        self.spirv_dir = self.dir / "spirv"
        self._manifests: dict[str, Manifest] = {}
        self._aliases: dict[str, tuple[str, dict[str, str]]] | None = None
        self._index: dict | None = None
        self._memo: dict[tuple[str, Variant], bytes] = {}  # files are read once per process
        self._resolved: dict[tuple, tuple[str, Variant]] = {}  # resolve() answers, by request

    # ---- what exists
    def stems(self) -> list[str]:
        return sorted(p.stem for p in self.dir.glob("*.comp"))

    def source(self, stem: str) -> str:
        return (self.dir / f"{stem}.comp").read_text(encoding="utf-8")

    def manifest(self, stem: str) -> Manifest:
        if stem not in self._manifests:
            self._manifests[stem] = parse_manifest(self.source(stem), f"{stem}.comp")
        return self._manifests[stem]

    def aliases(self) -> dict[str, tuple[str, dict[str, str]]]:
        if self._aliases is None:
            table: dict[str, tuple[str, dict[str, str]]] = {}
            for stem in self.stems():
                for alias, defs in self.manifest(stem).aliases.items():
                    if alias in table or (self.dir / f"{alias}.comp").exists():
                        raise ShaderCompileError(f"built-in shader alias '{alias}' ({stem}.comp) is "
                                                 "already a shader or another alias")
                    table[alias] = (stem, normalize_defines(defs))
            self._aliases = table
        return self._aliases

    def names(self) -> list[str]:
        return sorted(self.stems() + list(self.aliases()))

    # ---- choosing a variant
    def resolve(self, name: str, fp16_storage: bool, defines: dict | None = None,
                fp16_arithmetic: bool = False, target: str = TARGET) -> tuple[str, Variant]:
        """Name (file stem or alias) + options -> (file stem, Variant). Manifest defaults fill gaps.

        fp16_arithmetic is honoured where the manifest ships it for these defines (and fp16
        storage is on); elsewhere the variant is the fp16-storage one. A SPIR-V 1.0 target the
        variant has no build for gives the default target."""
        request = (name, bool(fp16_storage), bool(fp16_arithmetic), target,
                   tuple(sorted((str(k), repr(v)) for k, v in (defines or {}).items())))
        hit = self._resolved.get(request)
        if hit is None:
            hit = self._resolved[request] = self._resolve(name, fp16_storage, defines, fp16_arithmetic, target)
        return hit

    def _resolve(self, name: str, fp16_storage: bool, defines: dict | None,
                 fp16_arithmetic: bool, target: str) -> tuple[str, Variant]:
        if not _NAME_RE.match(name or ""):
            raise ShaderCompileError(f"bad built-in shader name {name!r}")
        if (self.dir / f"{name}.comp").is_file():
            stem, alias_defs = name, {}
        elif name in self.aliases():
            stem, alias_defs = self.aliases()[name]
        else:
            known = ", ".join(self.names()) or "(none)"
            raise ShaderCompileError(f"no built-in shader named '{name}' (known: {known})")
        manifest = self.manifest(stem)
        merged = {**manifest.defaults(), **alias_defs, **normalize_defines(defines)}
        arith = bool(fp16_arithmetic and fp16_storage and manifest.has_fp16a(merged))
        if target == TARGET_VULKAN_1_0 and (fp16_storage or not manifest.builds_for_vulkan10(merged)):
            target = TARGET
        return stem, Variant(bool(fp16_storage), tuple(sorted(merged.items())), arith, target)

    def all_variants(self, stem: str) -> list[Variant]:
        """What build_spirv ships: manifest axes' product and every alias, times both storages,
        plus the fp16-arithmetic variants the manifest asks for and the SPIR-V 1.0 builds
        (fp32) the `// vulkan1.0:` line allows."""
        manifest = self.manifest(stem)
        axes = sorted(manifest.variants.items())
        combos = [dict(zip([k for k, _ in axes], values)) for values in itertools.product(*[v for _, v in axes])]
        for alias_stem, defs in self.aliases().values():
            if alias_stem == stem:
                combos.append({**manifest.defaults(), **defs})
        out: list[Variant] = []
        for fp16, arith in ((False, False), (True, False), (True, True)):
            for defs in combos:
                if arith and not manifest.has_fp16a(defs):
                    continue
                v = Variant(fp16, tuple(sorted(defs.items())), arith)
                if v not in out:
                    out.append(v)
        # the SPIR-V 1.0 builds for Vulkan 1.0 devices: fp32 storage, as the manifest allows
        for defs in combos:
            v = Variant(False, tuple(sorted(defs.items())), target=TARGET_VULKAN_1_0)
            if manifest.builds_for_vulkan10(defs) and v not in out:
                out.append(v)
        return out

    def compiler_input(self, stem: str, variant: Variant) -> ExpandedSource:
        return build_compiler_input(self.source(stem), f"{stem}.comp", dict(variant.defines),
                                    variant.fp16_storage, variant.fp16_arithmetic, [self.include_dir])

    # ---- shipped SPIR-V
    def index(self) -> dict:
        if self._index is None:
            try:
                self._index = json.loads((self.spirv_dir / "index.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._index = {}
        return self._index

    def shipped(self, stem: str, variant: Variant, wanted_hash: str) -> tuple[bytes | None, str]:
        """(SPIR-V, '') when shipped and current; else (None, why not)."""
        entry = self.index().get("shaders", {}).get(stem, {}).get(variant.key)
        if entry is None:
            return None, "not shipped"
        if entry.get("source_sha256") != wanted_hash:
            return None, "stale (the .comp or the preamble changed since build_spirv ran)"
        try:
            data = (self.spirv_dir / entry["file"]).read_bytes()
        except (OSError, KeyError):
            return None, "missing file"
        if hashlib.sha256(data).hexdigest() != entry.get("spirv_sha256"):
            return None, "damaged file"
        return data, ""

    # ---- the lookup
    def get(self, name: str, fp16_storage: bool, defines: dict | None = None,
            fp16_arithmetic: bool = False, target: str = TARGET) -> bytes:
        stem, variant = self.resolve(name, fp16_storage, defines, fp16_arithmetic, target)
        memo_key = (stem, variant)
        hit = self._memo.get(memo_key)
        if hit is not None:
            return hit
        inp = self.compiler_input(stem, variant)
        spirv, why = self.shipped(stem, variant, source_hash(inp, variant.target))
        if spirv is None:
            if compiler_disabled():
                raise ShaderCompileError(
                    f"built-in shader '{name}' [{variant.key}]: shipped SPIR-V {why}, and VKNCNN_NO_COMPILER "
                    "forbids compiling (run `python -m vkncnn.tools.build_spirv` where glslang is available)")
            logger.info("built-in shader %s [%s]: shipped SPIR-V %s; falling back to the cache or the compiler",
                        name, variant.key, why)
            spirv = _compile_cached(inp, f"{stem}.comp", variant.target)
        self._memo[memo_key] = spirv
        return spirv


_builtins = BuiltinShaders(SHADER_DIR)


def builtin_shaders() -> BuiltinShaders:
    """The package's own shader folder."""
    return _builtins


def list_builtin_shaders() -> list[str]:
    """Every built-in shader name: file stems and manifest aliases."""
    return _builtins.names()


def get_builtin_spirv(name: str, opt, vkdev=None, defines: dict | None = None) -> bytes:
    """SPIR-V of built-in shader `name` for these options (fp16 storage if opt asks and vkdev
    can; fp16 arithmetic too where opt asks, vkdev can and the shader has that variant).

    name: a shaders/<name>.comp stem or a manifest alias ("relu", "relu_pack4").
    defines: extra or overriding macros, e.g. {"PACK4": 1}; manifest defaults fill the rest.
    The SPIR-V version follows the device (spirv_target).
    """
    return _builtins.get(name, effective_fp16_storage(opt, vkdev), defines, effective_fp16_arithmetic(opt, vkdev),
                         spirv_target(vkdev))


def builtin_variant(name: str, opt, vkdev=None, defines: dict | None = None) -> Variant:
    """The Variant get_builtin_spirv picks for the same arguments (its .key says e.g.
    'fp16a;PACK4=1'): what a Pipeline made from a built-in name records as its variant."""
    return _builtins.resolve(name, effective_fp16_storage(opt, vkdev), defines,
                             effective_fp16_arithmetic(opt, vkdev), spirv_target(vkdev))[1]


def compile_glsl(source: str, defines: dict | None = None, name: str = "shader", fp16_storage: bool = False,
                 fp16_arithmetic: bool = False, include_dirs: list | None = None, target: str = TARGET) -> bytes:
    """Compile a user's GLSL compute shader (with the vkncnn preamble) to SPIR-V bytes.

    `#include "x.comp"` searches include_dirs, then the built-in shaders/include/.
    target: source.TARGET (SPIR-V 1.3), or TARGET_VULKAN_1_0 (spirv_target(vkdev) picks).
    Cached in-process and on disk. Raises ShaderCompileError with glslang's log.
    """
    dirs = [Path(d) for d in (include_dirs or [])] + [_builtins.include_dir]
    inp = build_compiler_input(source, name, normalize_defines(defines), fp16_storage, fp16_arithmetic, dirs)
    memo_key = ("user", source_hash(inp, target))
    hit = _memo.get(memo_key)
    if hit is not None:
        return hit
    if compiler_disabled():
        raise ShaderCompileError(f"shader '{name}' needs compiling but VKNCNN_NO_COMPILER is set")
    spirv = _compile_cached(inp, name, target)
    _memo[memo_key] = spirv
    return spirv
