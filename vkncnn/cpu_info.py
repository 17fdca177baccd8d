"""ncnn's CPU and thread functions: CPU counts, big/little clusters, ISA support, OpenMP knobs.

The counts and ISA flags come from what the OS says (os.cpu_count, sysfs, /proc/cpuinfo)
and fall back to plain answers where it says nothing (macOS, Windows): nothing here
raises on an unknown platform. vkncnn runs no OpenMP: the omp / kmp setters keep their
values, check them and give them back, so code written for ncnn reads what it set.
A failed setter raises a vkncnn.Error instead of returning -1.
"""

from __future__ import annotations

import functools
import os
import platform

from .blas_threads import available_cpus
from .errors import ArgumentError, ArgumentTypeError
from .mat import is_int

__all__ = [
    "cpu_support_arm_asimdhp", "cpu_support_arm_neon", "cpu_support_arm_vfpv4", "cpu_support_x86_avx",
    "cpu_support_x86_avx2", "get_big_cpu_count", "get_cpu_count", "get_cpu_powersave", "get_kmp_blocktime",
    "get_little_cpu_count", "get_omp_dynamic", "get_omp_num_threads", "get_omp_thread_num",
    "get_physical_big_cpu_count", "get_physical_cpu_count", "get_physical_little_cpu_count",
    "set_cpu_powersave", "set_kmp_blocktime", "set_omp_dynamic", "set_omp_num_threads",
]

_SYS_CPU = "/sys/devices/system/cpu"
_settings = {"powersave": 0, "omp_num_threads": None, "omp_dynamic": 0, "kmp_blocktime": 0}


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


@functools.cache
def _cpu_flags() -> frozenset[str]:
    """The ISA words of /proc/cpuinfo ('flags' on x86, 'Features' on ARM); empty elsewhere."""
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return frozenset(value.split())
    return frozenset()


def _machine() -> str:
    return platform.machine().lower()


def _is_aarch64() -> bool:
    return _machine() in ("aarch64", "arm64", "armv8l", "armv8b")


# -- CPU counts ------------------------------------------------------------------

def get_cpu_count() -> int:
    """Logical CPUs of the machine."""
    return max(1, os.cpu_count() or 1)


@functools.cache
def _max_freqs() -> dict[int, int]:
    """{cpu: its highest frequency in kHz} where sysfs gives it (Linux, Android)."""
    freqs = {}
    for cpu in range(get_cpu_count()):
        value = _read(f"{_SYS_CPU}/cpu{cpu}/cpufreq/cpuinfo_max_freq")
        if value and value.isdigit():
            freqs[cpu] = int(value)
    return freqs


def _little_cpus() -> set[int]:
    """CPUs slower than the fastest ones: ncnn's little cluster. Only ARM has one here;
    x86 CPUs all count as big, as ncnn counts them."""
    freqs = _max_freqs()
    if not _machine().startswith(("arm", "aarch")) or len(set(freqs.values())) < 2:
        return set()
    fastest = max(freqs.values())
    return {cpu for cpu, f in freqs.items() if f < fastest}


def get_little_cpu_count() -> int:
    return len(_little_cpus())


def get_big_cpu_count() -> int:
    return max(1, get_cpu_count() - get_little_cpu_count())


def _physical_cores(cpus: set[int]) -> int:
    """Cores behind the given logical CPUs (hyper-threads share one), from sysfs topology."""
    cores = set()
    for cpu in cpus:
        siblings = _read(f"{_SYS_CPU}/cpu{cpu}/topology/thread_siblings_list")
        if siblings is None:
            return len(cpus)  # no topology: every logical CPU is a core
        cores.add(siblings)
    return len(cores)


def get_physical_cpu_count() -> int:
    return max(1, _physical_cores(set(range(get_cpu_count()))))


def get_physical_little_cpu_count() -> int:
    return _physical_cores(_little_cpus())


def get_physical_big_cpu_count() -> int:
    big = set(range(get_cpu_count())) - _little_cpus()
    return max(1, _physical_cores(big))


# -- power save and OpenMP knobs ---------------------------------------------------

def _int_arg(name: str, what: str, value) -> int:
    if not is_int(value):
        raise ArgumentTypeError(f"{name}(): {what} must be an int, got {type(value).__name__} {value!r:.40}")
    return int(value)


def get_cpu_powersave() -> int:
    """0 all cores, 1 little cores only, 2 big cores only (as last set)."""
    return _settings["powersave"]


def set_cpu_powersave(powersave: int) -> int:
    """Keep the core choice (0 all, 1 little, 2 big); 0 on success as in ncnn."""
    value = _int_arg("set_cpu_powersave", "powersave", powersave)
    if value not in (0, 1, 2):
        raise ArgumentError(f"set_cpu_powersave(): powersave must be 0 (all cores), 1 (little) or 2 (big), "
                            f"got {value}")
    _settings["powersave"] = value
    return 0


def get_omp_num_threads() -> int:
    """Threads a parallel region would use: the CPUs this process may run on until set."""
    value = _settings["omp_num_threads"]
    return available_cpus() if value is None else value


def set_omp_num_threads(num_threads: int) -> None:
    value = _int_arg("set_omp_num_threads", "num_threads", num_threads)
    if value < 1:
        raise ArgumentError(f"set_omp_num_threads(): num_threads must be >= 1, got {value}")
    _settings["omp_num_threads"] = value


def get_omp_dynamic() -> int:
    return _settings["omp_dynamic"]


def set_omp_dynamic(dynamic: int) -> None:
    _settings["omp_dynamic"] = 1 if _int_arg("set_omp_dynamic", "dynamic", dynamic) else 0


def get_omp_thread_num() -> int:
    """The calling thread's number in a parallel region: 0, since Python code runs outside one."""
    return 0


def get_kmp_blocktime() -> int:
    return _settings["kmp_blocktime"]


def set_kmp_blocktime(time_ms: int) -> None:
    value = _int_arg("set_kmp_blocktime", "time_ms", time_ms)
    if value < 0:
        raise ArgumentError(f"set_kmp_blocktime(): time_ms must be >= 0, got {value}")
    _settings["kmp_blocktime"] = value


# -- instruction sets ----------------------------------------------------------------

def cpu_support_arm_neon() -> int:
    """1 where NEON (ASIMD) exists: always on aarch64, per /proc/cpuinfo on 32-bit ARM."""
    return int(_is_aarch64() or bool({"neon", "asimd"} & _cpu_flags()))


def cpu_support_arm_vfpv4() -> int:
    return int(_is_aarch64() or "vfpv4" in _cpu_flags())


def cpu_support_arm_asimdhp() -> int:
    """1 where ARMv8.2 half-precision arithmetic exists (Apple silicon has it)."""
    apple_arm = platform.system() == "Darwin" and _is_aarch64()
    return int(apple_arm or "asimdhp" in _cpu_flags())


def cpu_support_x86_avx() -> int:
    return int("avx" in _cpu_flags())


def cpu_support_x86_avx2() -> int:
    return int("avx2" in _cpu_flags())
