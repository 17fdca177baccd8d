"""Tell numpy's BLAS how many threads to use (opt.num_threads), at run time.

numpy's bundled OpenBLAS sizes its thread pool from the host's CPU count, not from
the CPUs this process may run on: in a 2-CPU container on a large host it starts
dozens of spinning threads and even a small product runs many times slower than with
the right count (figures: docs/perf-notes.md, "BLAS thread pool size"). Setting
OPENBLAS_NUM_THREADS works only before numpy is imported, which the user controls, so
we call the BLAS library's own setter at run time instead: through threadpoolctl where that
package is installed (it knows OpenBLAS, MKL and BLIS on every OS), else OpenBLAS's setter
found through ctypes in the libraries /proc/self/maps lists (Linux; elsewhere BLAS is left
as it is).

A threaded BLAS call waits for its slowest thread. When another process keeps a core
busy, that thread waits for a scheduler time slice, and every threaded call stalls:
with one of two cores busy, threading the smaller products made a whole model far
slower, where on the idle machine it made it faster (figures: docs/perf-notes.md,
"BLAS threads under load (the load cap)"). So each forward pass first looks at how many
tasks elsewhere are runnable (update_load_cap) and uses no more threads than the CPUs
they leave free.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy  # noqa: F401  (loads the BLAS library we look for)

_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads64_", "scipy_openblas_set_num_threads")
_lock = threading.Lock()
_current: int | None = None
_functions: list | None = None
_cap = 1 << 30  # the most threads set_blas_threads gives (update_load_cap)


def available_cpus() -> int:
    """CPUs this process may run on (affinity/cgroup aware where the OS says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _find_setters() -> list:
    """Callables that set the BLAS libraries' thread counts (each takes n)."""
    try:
        import threadpoolctl  # lazy: optional, and its library scan runs once, here
    except ImportError:
        return _find_openblas_setters()
    blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
    return [lib.set_num_threads for lib in blas.lib_controllers]


def _find_openblas_setters() -> list:
    """OpenBLAS's setters, looked up in the BLAS libraries this process has mapped."""
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


def update_load_cap() -> int:
    """Cap the BLAS threads to the CPUs that other runnable tasks leave free now (at
    least 1), and return the cap. Called once per forward pass (checking before every
    threaded product as well measured no better under a bursty load). The count is
    machine-wide, so a process pinned to some of the CPUs (a container's cpuset, taskset)
    learns nothing about its own from it: there the cap stays off."""
    global _cap
    cpus = os.cpu_count() or 1
    _cap = 1 << 30 if available_cpus() < cpus else max(1, cpus - _runnable_elsewhere())
    return _cap


def _runnable_elsewhere() -> int:
    """Runnable tasks of other processes right now: Linux's count in /proc/loadavg less
    this process's running threads (BLAS workers still spinning after a call are ours).
    0 where the OS does not say."""
    try:
        with open("/proc/loadavg") as f:
            runnable = int(f.read().split()[3].split("/")[0])
        if runnable <= 1:  # the thread reading it: no need to count ours (a cheaper read)
            return 0
        ours = 0
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/stat") as f:
                stat = f.read()
            ours += stat[stat.rindex(")") + 2] == "R"   # the state follows "(name) "
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, runnable - ours)


def set_blas_threads(n: int) -> None:
    """Use `n` BLAS threads (clamped to the CPUs available and to the load cap); cheap
    when unchanged."""
    global _current, _functions
    n = max(1, min(int(n), available_cpus(), _cap))
    if n == _current:
        return
    with _lock:
        if _functions is None:
            _functions = _find_setters()
        for fn in _functions:
            fn(n)
        _current = n
