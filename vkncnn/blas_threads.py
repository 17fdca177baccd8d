"""Tell numpy's BLAS how many threads to use (opt.num_threads), at run time.

numpy's bundled OpenBLAS sizes its thread pool from the host's CPU count, not from
the CPUs this process may run on: in a 2-CPU container on a large host it starts
dozens of spinning threads and a 16x64 @ 64x3025 product takes 15 ms instead of
0.06 ms. Setting OPENBLAS_NUM_THREADS works only before numpy is imported, which
the user controls, so we call OpenBLAS's own setter through ctypes instead.
"""

from __future__ import annotations

import ctypes
import os
import threading

_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads64_", "scipy_openblas_set_num_threads")
_lock = threading.Lock()
_current: int | None = None
_functions: list | None = None


def available_cpus() -> int:
    """CPUs this process may run on (affinity/cgroup aware where the OS says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _find_setters() -> list:
    found = []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line.lower() and ".so" in line}
    except OSError:  # not Linux: leave BLAS as it is
        return found
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                found.append(fn)
                break
    return found


def set_blas_threads(n: int) -> None:
    """Use `n` BLAS threads (clamped to the CPUs available); cheap when unchanged."""
    global _current, _functions
    n = max(1, min(int(n), available_cpus()))
    if n == _current:
        return
    with _lock:
        if _functions is None:
            import numpy  # noqa: F401  (loads the BLAS library we look for)
            _functions = _find_setters()
        for fn in _functions:
            fn(n)
        _current = n
