"""The Vulkan instance: one per process, created lazily, and the device list in ncnn's order.

ncnn's functions, same names: create_gpu_instance / destroy_gpu_instance / get_gpu_count /
get_default_gpu_index / get_gpu_info / get_gpu_device. Devices are sorted best first
(discrete > integrated > virtual > cpu, enumeration order within a type), so index 0
is the default.

Validation: with VKNCNN_VALIDATION=1 the instance enables VK_LAYER_KHRONOS_validation
with synchronization validation, and a debug messenger appends every warning and error
to `validation_messages()`. Tests assert that list stays empty.

Lifetime: destroy_gpu_instance() may be called while devices still have live buffers or
recorders (a Net not yet garbage-collected, a user's VkMat). It only *retires* the
instance: devices and the VkInstance are destroyed once the last object using them is
released (reference counts in VulkanDevice and GpuInstance). A later get_gpu_* call
starts a fresh instance.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile

from ...errors import GpuError
from . import device_profile, lifetime
from .device import VulkanDevice
from .gpu_info import GpuInfo
from .lifetime import RefCounted
from .lifetime import lock as _lock
from .vk import check, cstrings, vk

_VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
_API_1_1 = (1 << 22) | (1 << 12)
_API_1_3 = (1 << 22) | (3 << 12)

_instance: GpuInstance | None = None
_last_error: str | None = None
_messages: list[str] = []


def validation_messages() -> list[str]:
    """Every warning/error the validation layer reported (live list; empty when off)."""
    return _messages


def clear_validation_messages() -> None:
    _messages.clear()


def validation_requested() -> bool:
    return os.environ.get("VKNCNN_VALIDATION", "").strip().lower() in ("1", "true", "yes", "on")


class GpuInstance(RefCounted):
    """A VkInstance, its sorted device infos, and the logical devices made from them."""

    def __init__(self, driver_path: str | None = None) -> None:
        ffi, lib = vk.ffi, vk.lib
        self._init_refcount()
        self.devices: dict = {}
        self.messenger = None
        self._callback = None
        self._destroy_messenger = None

        self.api_version = _loader_version()
        layers = _instance_layers()
        self.validation = validation_requested() and _VALIDATION_LAYER in layers
        if validation_requested() and not self.validation:
            sys.stderr.write(f"vkncnn: VKNCNN_VALIDATION=1 but {_VALIDATION_LAYER} is not installed\n")
        available = _instance_extensions(None)
        extensions, flags = [], 0
        if "VK_KHR_portability_enumeration" in available:  # lists MoltenVK-style devices too
            extensions.append("VK_KHR_portability_enumeration")
            flags |= vk.VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
        layer_names = []
        chain_head = ffi.NULL
        features = feature_list = messenger_info = None
        if self.validation:
            layer_names.append(_VALIDATION_LAYER)
            layer_exts = _instance_extensions(_VALIDATION_LAYER)
            if "VK_EXT_debug_utils" in available | layer_exts:
                extensions.append("VK_EXT_debug_utils")
                self._callback = ffi.callback("PFN_vkDebugUtilsMessengerCallbackEXT", _on_validation_message)
                messenger_info = _messenger_create_info(self._callback)
                chain_head = messenger_info
            if "VK_EXT_validation_features" in layer_exts:
                extensions.append("VK_EXT_validation_features")
                feature_list = ffi.new("VkValidationFeatureEnableEXT[]",
                                       [vk.VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT])
                features = ffi.new("VkValidationFeaturesEXT*", {
                    "sType": vk.VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, "pNext": chain_head,
                    "enabledValidationFeatureCount": 1, "pEnabledValidationFeatures": feature_list})
                chain_head = features

        app_name = ffi.new("char[]", b"vkncnn")
        app = ffi.new("VkApplicationInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_APPLICATION_INFO, "pApplicationName": app_name,
            "applicationVersion": 1, "pEngineName": app_name, "engineVersion": 1,
            "apiVersion": min(self.api_version, _API_1_3)})
        ext_array, ext_owners = cstrings(extensions)
        layer_array, layer_owners = cstrings(layer_names)
        create_info = ffi.new("VkInstanceCreateInfo*", {
            "sType": vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, "pNext": chain_head, "flags": flags,
            "pApplicationInfo": app,
            "enabledLayerCount": len(layer_names), "ppEnabledLayerNames": layer_array,
            "enabledExtensionCount": len(extensions), "ppEnabledExtensionNames": ext_array})
        handle = ffi.new("VkInstance*")
        with _driver_override(driver_path):
            result = lib.vkCreateInstance(create_info, ffi.NULL, handle)
        if result == vk.VK_ERROR_INCOMPATIBLE_DRIVER:
            raise GpuError("no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"
                           + (f"; driver_path={driver_path!r}" if driver_path else ""))
        check(result, "vkCreateInstance")
        self.handle = handle[0]
        del ext_owners, layer_owners  # only needed until vkCreateInstance returned

        if messenger_info is not None:
            self._create_messenger(messenger_info)
        try:
            physical = _enumerate_physical_devices(self.handle)
            # VKNCNN_DEVICE_PROFILE: every device reports no more than the profile grants
            profile = device_profile.requested_profile()
            infos = [device_profile.apply_profile(GpuInfo(pd, self.api_version, self.handle), profile)
                     for pd in physical]
        except BaseException:
            self._destroy()
            raise
        self.infos = order_devices(infos)

    # -- debug messenger --------------------------------------------------------------------
    def _create_messenger(self, info) -> None:
        ffi = vk.ffi
        create = _instance_proc(self.handle, "vkCreateDebugUtilsMessengerEXT")
        self._destroy_messenger = _instance_proc(self.handle, "vkDestroyDebugUtilsMessengerEXT")
        out = ffi.new("VkDebugUtilsMessengerEXT*")
        check(create(self.handle, info, ffi.NULL, out), "vkCreateDebugUtilsMessengerEXT")
        self.messenger = out[0]

    # -- lifetime (retain / release_ref / retire: lifetime.RefCounted) ----------------------
    def _on_retire(self) -> None:
        for dev in list(self.devices.values()):
            dev.retire()

    def _destroy(self) -> None:
        self.destroyed = True
        if self.messenger is not None:
            self._destroy_messenger(self.handle, self.messenger, vk.ffi.NULL)
            self.messenger = None
        vk.lib.vkDestroyInstance(self.handle, vk.ffi.NULL)

    # -- devices ----------------------------------------------------------------------------
    def device(self, index: int):
        with _lock:
            dev = self.devices.get(index)
            if dev is None:
                dev = VulkanDevice(self, self.infos[index], index)
                self.devices[index] = dev
            return dev


def order_devices(infos: list) -> list:
    """Best first: discrete > integrated > virtual > cpu; sorted() is stable, so enumeration
    order breaks ties."""
    return sorted(infos, key=lambda info: info.type())


# -- module functions (ncnn's API) ------------------------------------------------------------
def create_gpu_instance(driver_path: str | None = None) -> int:
    """Start Vulkan (no-op if running). Returns 0; raises GpuError with the reason on failure.

    driver_path: a Vulkan ICD manifest (.json) or a driver library to use instead of the
    system's drivers (e.g. lavapipe's lvp_icd.x86_64.json).
    """
    global _instance, _last_error
    lifetime.check_not_forked("create_gpu_instance()")
    with _lock:
        if _instance is not None:
            return 0
        try:
            _instance = GpuInstance(driver_path)
            lifetime.vulkan_started = True
        except GpuError as e:
            _last_error = str(e)
            raise
        _last_error = None
        return 0


def destroy_gpu_instance() -> None:
    """Retire the instance; Vulkan objects still in use are destroyed when released."""
    global _instance
    with _lock:
        inst, _instance = _instance, None
    if inst is not None:
        inst.retire()


def current_instance() -> GpuInstance:
    """The running instance, started on first use (GpuError if Vulkan is unavailable)."""
    lifetime.check_not_forked("Vulkan")
    with _lock:
        if _instance is None:
            create_gpu_instance()
        return _instance


def unavailable_reason() -> str | None:
    """Why the last attempt to start Vulkan failed (None if it did not)."""
    return _last_error


def get_gpu_count() -> int:
    """Number of Vulkan devices; 0 when Vulkan is unavailable (see unavailable_reason())."""
    try:
        return len(current_instance().infos)
    except GpuError:
        return 0


def get_default_gpu_index() -> int:
    """Index of the best device (always 0 after sorting), -1 without devices."""
    return 0 if get_gpu_count() > 0 else -1


def _checked_index(index: int | None) -> tuple:
    inst = current_instance()
    count = len(inst.infos)
    if count == 0:
        raise GpuError("no Vulkan device found (the loader works but reports no physical device)")
    if index is None or index < 0:
        index = 0
    if index >= count:
        raise GpuError(f"GPU index {index} out of range: {count} Vulkan device(s) found")
    return inst, index


def get_gpu_info(index: int | None = 0) -> GpuInfo:
    inst, index = _checked_index(index)
    return inst.infos[index]


def get_gpu_device(index: int | None = None):
    """The VulkanDevice for `index` (default: the best one), created on first use."""
    inst, index = _checked_index(index)
    return inst.device(index)


# -- helpers ----------------------------------------------------------------------------------
def _on_validation_message(severity, types, data, user_data) -> int:
    with contextlib.suppress(Exception):  # never raise into the driver
        if severity >= vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT:
            text = vk.ffi.string(data.pMessage).decode("utf-8", "replace")
            _messages.append(text)
            sys.stderr.write(f"vkncnn validation: {text}\n")
    return 0  # VK_FALSE: do not abort the call


def _messenger_create_info(callback):
    return vk.ffi.new("VkDebugUtilsMessengerCreateInfoEXT*", {
        "sType": vk.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        "messageSeverity": vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
        | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        "messageType": vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
        | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
        | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        "pfnUserCallback": callback})


def _instance_proc(handle, name: str):
    ffi = vk.ffi
    ptr = vk.lib.vkGetInstanceProcAddr(handle, name.encode())
    if ptr == ffi.NULL:
        raise GpuError(f"{name} not available")
    return ffi.cast("PFN_" + name, ptr)


def _loader_version() -> int:
    ffi = vk.ffi
    try:
        fn = vk.lib.vkEnumerateInstanceVersion
    except AttributeError:  # a Vulkan 1.0 loader
        return 1 << 22
    out = ffi.new("uint32_t*")
    return out[0] if fn(out) == 0 else 1 << 22


def _instance_layers() -> set:
    ffi, lib = vk.ffi, vk.lib
    count = ffi.new("uint32_t*")
    lib.vkEnumerateInstanceLayerProperties(count, ffi.NULL)
    props = ffi.new("VkLayerProperties[]", count[0])
    lib.vkEnumerateInstanceLayerProperties(count, props)
    return {ffi.string(props[i].layerName).decode() for i in range(count[0])}


def _instance_extensions(layer: str | None) -> set:
    ffi, lib = vk.ffi, vk.lib
    name = ffi.new("char[]", layer.encode()) if layer else ffi.NULL
    count = ffi.new("uint32_t*")
    lib.vkEnumerateInstanceExtensionProperties(name, count, ffi.NULL)
    props = ffi.new("VkExtensionProperties[]", count[0])
    lib.vkEnumerateInstanceExtensionProperties(name, count, props)
    return {ffi.string(props[i].extensionName).decode() for i in range(count[0])}


def _enumerate_physical_devices(handle) -> list:
    ffi, lib = vk.ffi, vk.lib
    count = ffi.new("uint32_t*")
    check(lib.vkEnumeratePhysicalDevices(handle, count, ffi.NULL), "vkEnumeratePhysicalDevices")
    devices = ffi.new("VkPhysicalDevice[]", count[0])
    check(lib.vkEnumeratePhysicalDevices(handle, count, devices), "vkEnumeratePhysicalDevices")
    return [devices[i] for i in range(count[0])]


class _driver_override:
    """Point the loader at one driver while the instance is created, then restore the env."""

    _VARS = ("VK_DRIVER_FILES", "VK_ICD_FILENAMES")

    def __init__(self, driver_path: str | None) -> None:
        self.path = driver_path
        self.saved: dict = {}
        self.tmp = None

    def __enter__(self):
        if not self.path:
            return self
        manifest = os.fspath(self.path)
        if not manifest.endswith(".json"):  # a driver library: give the loader a manifest for it
            self.tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump({"file_format_version": "1.0.0",
                       "ICD": {"library_path": os.path.abspath(manifest), "api_version": "1.3.0"}}, self.tmp)
            self.tmp.close()
            manifest = self.tmp.name
        for var in self._VARS:
            self.saved[var] = os.environ.get(var)
            os.environ[var] = manifest
        return self

    def __exit__(self, *exc) -> None:
        for var, value in self.saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        if self.tmp is not None:
            os.unlink(self.tmp.name)


VulkanDevice.device_for_index = staticmethod(get_gpu_device)
