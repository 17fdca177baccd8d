"""BLAS thread control: opt.num_threads, lowered while other processes keep CPUs busy."""

import os

from vkncnn import blas_threads


def test_runnable_elsewhere_reads_the_os():
    assert blas_threads._runnable_elsewhere() >= 0


def test_load_cap_leaves_busy_cpus_alone(monkeypatch):
    cpus = os.cpu_count() or 1
    try:
        monkeypatch.setattr(blas_threads, "available_cpus", lambda: cpus)  # the whole machine is ours
        monkeypatch.setattr(blas_threads, "_runnable_elsewhere", lambda: cpus + 3)
        assert blas_threads.update_load_cap() == 1  # never below one thread
        blas_threads.set_blas_threads(2)
        assert blas_threads._current == 1
        monkeypatch.setattr(blas_threads, "_runnable_elsewhere", lambda: 0)
        assert blas_threads.update_load_cap() == cpus
        blas_threads.set_blas_threads(2)
        assert blas_threads._current == min(2, blas_threads.available_cpus())
    finally:
        blas_threads._cap = 1 << 30


def test_no_load_cap_when_pinned_to_some_cpus(monkeypatch):
    """The runnable count is machine-wide: with only some CPUs ours it says nothing about them."""
    try:
        monkeypatch.setattr(blas_threads.os, "cpu_count", lambda: 8)
        monkeypatch.setattr(blas_threads, "available_cpus", lambda: 4)
        monkeypatch.setattr(blas_threads, "_runnable_elsewhere", lambda: 11)
        assert blas_threads.update_load_cap() == 1 << 30
        monkeypatch.setattr(blas_threads, "available_cpus", lambda: 8)
        assert blas_threads.update_load_cap() == 1
    finally:
        blas_threads._cap = 1 << 30


def test_single_row_products_thread_from_fewer_multiply_adds():
    """A one-row product is bound by memory (its weights), so it gets the threads sooner."""
    from vkncnn.cpu_fallback.blas import PARALLEL_MACS, PARALLEL_VECTOR_MACS, BlasThreads

    between = (PARALLEL_VECTOR_MACS + PARALLEL_MACS) // 2
    assert BlasThreads(between, 2, vector=True).threads == 2
    assert BlasThreads(between, 2).threads == 1
    assert BlasThreads(PARALLEL_VECTOR_MACS - 1, 2, vector=True).threads == 1


def test_setters_come_from_threadpoolctl_when_installed(monkeypatch):
    """With threadpoolctl importable, its BLAS controllers' set_num_threads are the setters
    (a stand-in module here: the real one is optional)."""
    import sys
    import types

    calls = []

    class Lib:
        def __init__(self, name):
            self.name = name

        def set_num_threads(self, n):
            calls.append((self.name, n))

    class Controller:
        def select(self, user_api):
            assert user_api == "blas"
            return types.SimpleNamespace(lib_controllers=[Lib("openblas"), Lib("mkl")])

    monkeypatch.setitem(sys.modules, "threadpoolctl", types.SimpleNamespace(ThreadpoolController=Controller))
    for setter in blas_threads._find_setters():
        setter(3)
    assert calls == [("openblas", 3), ("mkl", 3)]


def test_setters_fall_back_to_proc_maps_without_threadpoolctl(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails as if not installed
    monkeypatch.setattr(blas_threads, "_find_openblas_setters", lambda: ["from /proc/self/maps"])
    assert blas_threads._find_setters() == ["from /proc/self/maps"]
