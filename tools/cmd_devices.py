"""vkncnn devices: the Vulkan devices vkncnn sees, what each can do, and which is the default.

    vkncnn devices [--json]

The default is what a net gets without set_vulkan_device() (and `--device 0` elsewhere):
devices are ranked discrete > integrated > virtual > cpu, ties in the driver's order.
Without the `vulkan` package or a Vulkan loader this says so and how to get them, rather
than reporting zero devices as if the machine had no GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json

import vkncnn

from .cmd_common import CommandError

HEAP_DEVICE_LOCAL = 0x1  # VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
NVIDIA = 0x10DE
RANKING = "devices are ranked discrete > integrated > virtual > cpu, then in the driver's order"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def vulkan_installed() -> bool:
    """Whether the `vulkan` Python binding can be imported (without importing it)."""
    return importlib.util.find_spec("vulkan") is not None


def _version(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def _driver_version(vendor: int, v: int) -> str:
    """NVIDIA packs its driver version 10.8.8.6 bits; other drivers use Vulkan's encoding."""
    if vendor == NVIDIA:
        return f"{v >> 22}.{(v >> 14) & 0xFF}.{(v >> 6) & 0xFF}"
    return _version(v)


def describe(index: int, info, default: int) -> dict:
    """One device as plain data (the JSON form; the text form is printed from it)."""
    return {
        "index": index,
        "name": info.device_name(),
        "type": info.type_name(),
        "default": index == default,
        "api_version": _version(info.api_version()),
        "driver_name": info.driver_name(),
        "driver_version": _driver_version(info.vendor_id(), info.driver_version()),
        "vendor_id": info.vendor_id(),
        "device_id": info.device_id(),
        "fp16_storage": info.support_fp16_storage(),
        "fp16_arithmetic": info.support_fp16_arithmetic(),
        "int8_storage": info.support_int8_storage(),
        "int8_arithmetic": info.support_int8_arithmetic(),
        "subgroup_size": info.subgroup_size(),
        "cooperative_matrix": info.support_cooperative_matrix(),
        "cooperative_matrix_shapes": sorted(list(s) for s in info.cooperative_matrix_shapes()),
        "memory_heaps": [{"size": int(size), "device_local": bool(flags & HEAP_DEVICE_LOCAL)}
                         for size, flags in info.memory_heaps()],
        "max_workgroup_size": list(info.max_workgroup_size()),
        "max_workgroup_invocations": info.max_workgroup_invocations(),
        "compute_queues": info.compute_queue_count(),
    }


def default_reason(devices: list[dict], default: int) -> str:
    """Why `default` is the default: the only device, or the best-ranked type."""
    if default < 0:
        return "no device"
    kind = devices[default]["type"]
    if len(devices) == 1:
        reason = "the only Vulkan device"
    else:
        same = [d for d in devices if d["type"] == kind]
        reason = f"{'the first' if len(same) > 1 else 'the'} {kind} device; {RANKING}"
    if kind == "cpu":
        reason += " (a software Vulkan device such as lavapipe: correct, but slower than a GPU)"
    return reason


def list_devices() -> dict:
    """{"default", "default_reason", "devices"}; a CommandError when Vulkan cannot start."""
    if not vulkan_installed():
        raise CommandError("the Python package `vulkan` is not installed, so vkncnn has no GPU path here; "
                           "install it with: pip install 'vkncnn[gpu]'")
    count = vkncnn.get_gpu_count()
    if count == 0:
        from vkncnn.gpu.vulkan import instance  # lazy: the Vulkan runtime, only to say why it did not start

        reason = instance.unavailable_reason()
        raise CommandError(reason or "no Vulkan device found: the loader works but reports no physical device "
                           "(for a CPU Vulkan device install Mesa's lavapipe, package mesa-vulkan-drivers)")
    default = vkncnn.get_default_gpu_index()
    devices = [describe(i, vkncnn.get_gpu_info(i), default) for i in range(count)]
    return {"default": default, "default_reason": default_reason(devices, default), "devices": devices}


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def format_text(report: dict) -> str:
    lines = []
    for d in report["devices"]:
        mark = "  (default)" if d["default"] else ""
        coopmat = "yes " + " ".join(f"{m}x{n}x{k} {a}->{c}" for m, n, k, a, c in d["cooperative_matrix_shapes"]) \
            if d["cooperative_matrix"] else "no"
        heaps = ", ".join(_gib(h["size"]) + (" device-local" if h["device_local"] else "") for h in d["memory_heaps"])
        lines += [
            f"[{d['index']}] {d['name']}{mark}",
            f"    type              {d['type']}",
            f"    Vulkan API        {d['api_version']}",
            f"    driver            {d['driver_name'] or '?'} {d['driver_version']}",
            f"    vendor / device   0x{d['vendor_id']:04x} / 0x{d['device_id']:04x}",
            f"    fp16              storage {'yes' if d['fp16_storage'] else 'no'}, "
            f"arithmetic {'yes' if d['fp16_arithmetic'] else 'no'}",
            f"    int8              storage {'yes' if d['int8_storage'] else 'no'}, "
            f"arithmetic {'yes' if d['int8_arithmetic'] else 'no'}",
            f"    subgroup size     {d['subgroup_size']}",
            f"    coop. matrix      {coopmat}",
            f"    memory heaps      {heaps}",
            f"    max workgroup     {'x'.join(map(str, d['max_workgroup_size']))}, "
            f"{d['max_workgroup_invocations']} invocations",
            f"    compute queues    {d['compute_queues']}",
        ]
    lines.append(f"default: device {report['default']}: {report['default_reason']}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = list_devices()
    print(json.dumps(report) if args.json else format_text(report))
    return 0
