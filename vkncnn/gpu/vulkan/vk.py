"""The `vulkan` binding (cffi), loaded on first use, and VkResult checking.

The `vulkan` package dlopens the Vulkan loader when it is imported, so importing it
eagerly would make `import vkncnn` fail (or be slow) on machines without Vulkan.
Every GPU module reaches Vulkan through the `vk` proxy below instead: the first
attribute access imports the package, and a missing package or loader becomes a
GpuError that says what to install.

We call the C functions directly (`vk.lib.vkCreateBuffer(...)`) with structs made by
`vk.ffi.new(...)`. That keeps every struct's lifetime explicit: a struct lives as long
as the Python variable naming it, which is the cffi pitfall DESIGN.md warns about
(nested create-info structs and strings freed early when built inline).
"""

from __future__ import annotations

import ctypes
import importlib
import sys

from ...errors import GpuError

_module = None
_result_names: dict[int, str] = {}

# Shown with the failing VkResult: what the code usually means for a user.
_HINTS = {
    "VK_ERROR_OUT_OF_DEVICE_MEMORY": "the GPU ran out of memory",
    "VK_ERROR_OUT_OF_HOST_MEMORY": "the host ran out of memory",
    "VK_ERROR_DEVICE_LOST": "the GPU device was lost (driver crash, reset or timeout)",
    "VK_ERROR_INCOMPATIBLE_DRIVER": "no Vulkan driver (ICD) that supports the requested API version",
    "VK_ERROR_INITIALIZATION_FAILED": "the driver failed to initialise",
    "VK_ERROR_EXTENSION_NOT_PRESENT": "a requested extension is not supported",
    "VK_ERROR_FEATURE_NOT_PRESENT": "a requested device feature is not supported",
    "VK_ERROR_LAYER_NOT_PRESENT": "a requested layer is not installed",
}


# Loader names the `vulkan` package does not try itself: it dlopens only libvulkan.so.1,
# vulkan-1.dll and libvulkan.dylib, but Android ships its loader as plain libvulkan.so.
FALLBACK_LOADERS = ("libvulkan.so",)


def _import_vulkan():
    """The import itself, separate so tests can simulate a machine without Vulkan."""
    try:
        import vulkan  # lazy: the binding dlopens the Vulkan loader when imported
    except OSError as first:
        for name in FALLBACK_LOADERS:
            try:
                return _import_vulkan_with_loader(name)
            except OSError:
                continue
        raise first
    return vulkan


class _LoaderRenamingFFI:
    """The package's cffi FFI, except that dlopen of its first loader name opens `loader`.

    The package picks its loader by name at import time, from a tuple inside the module
    being imported, and cffi's FFI objects do not let dlopen be replaced; so for that one
    import its module sees this wrapper in place of its FFI, and the real FFI is put back
    everywhere straight after (every later call goes to cffi directly).
    """

    def __init__(self, ffi, loader: str) -> None:
        self._ffi = ffi
        self._loader = loader

    def dlopen(self, name, *args):
        return self._ffi.dlopen(self._loader if name == "libvulkan.so.1" else name, *args)

    def __getattr__(self, name: str):
        return getattr(self._ffi, name)


def _import_vulkan_with_loader(loader: str):
    """`import vulkan` again after it failed, its loader dlopened as `loader` (OSError when
    that name does not load either)."""
    ctypes.CDLL(loader)  # OSError here, before touching the package, when this name is absent too
    # the FFI module, imported by the failed attempt and kept (it opens no library); importing
    # it by name would run the package's __init__, and so the failing dlopen, again
    cache = sys.modules.get("vulkan._vulkancache")
    if cache is None:
        raise OSError("the vulkan package's FFI module was not imported")
    real = cache.ffi
    cache.ffi = _LoaderRenamingFFI(real, loader)
    try:
        for partial in ("vulkan", "vulkan._vulkan"):
            sys.modules.pop(partial, None)
        vulkan = importlib.import_module("vulkan")
    finally:
        cache.ffi = real
    sys.modules["vulkan._vulkan"].ffi = real
    vulkan.ffi = real
    return vulkan


def load():
    """The `vulkan` module, imported on first call; GpuError if it cannot be."""
    global _module
    if _module is None:
        try:
            mod = _import_vulkan()
        except ImportError as e:
            raise GpuError("the Python package `vulkan` is not installed "
                           "(install the GPU extra: pip install 'vkncnn[gpu]')") from e
        except OSError as e:
            raise GpuError(f"no Vulkan loader found (libvulkan.so.1 / libvulkan.so / vulkan-1.dll / libvulkan.dylib): "
                           f"{e}. "
                           "Install your GPU driver's Vulkan support, or Mesa's lavapipe "
                           "(package mesa-vulkan-drivers) for a CPU Vulkan device") from e
        _module = mod
    return _module


def is_loaded() -> bool:
    return _module is not None


class _LazyVulkan:
    """`vk.X` is `vulkan.X`; the first access imports the package."""

    def __getattr__(self, name: str):
        return getattr(load(), name)


vk = _LazyVulkan()


def result_name(result: int) -> str:
    if not _result_names:
        mod = load()
        for key, value in vars(mod).items():
            if key.startswith(("VK_ERROR_", "VK_SUCCESS", "VK_NOT_READY", "VK_TIMEOUT", "VK_INCOMPLETE")) \
                    and isinstance(value, int) and "_BEGIN_RANGE" not in key and "_END_RANGE" not in key:
                _result_names.setdefault(value, key)
    return _result_names.get(result, f"VkResult {result}")


def check(result: int, what: str) -> None:
    """Raise GpuError naming the call and the VkResult unless `result` is VK_SUCCESS."""
    if result == 0:
        return
    name = result_name(result)
    hint = _HINTS.get(name)
    raise GpuError(f"{what} failed: {name}" + (f" ({hint})" if hint else ""))


def cstrings(names):
    """A `char*[]` for a list of str plus the owning buffers (keep both alive)."""
    ffi = vk.ffi
    owners = [ffi.new("char[]", n.encode()) for n in names]
    return ffi.new("char*[]", owners) if owners else ffi.NULL, owners


def version_string(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"
