"""Lifetimes of the Vulkan instance and devices, and how finalizers hand work back.

Finalizers (``__del__``) run wherever the garbage collector happens to run: in any
thread, at any allocation, possibly while that very thread holds one of vkncnn's locks,
and, for objects in a reference cycle, in no particular order. So a finalizer here never
takes a lock and never calls Vulkan: it only appends the release it wants to a queue
(`defer`). The queue is run (`run_deferred`) at safe points: the start of public calls
such as Extractor.extract, Net.clear and load, where the calling thread holds no vkncnn
lock. An object whose finalizer deferred its own release stays alive (it is referenced
from the queue) until then, so everything it retains (its device) is still there.

At interpreter exit the OS reclaims all GPU memory; destroying Vulkan objects in
garbage-collection order could call into a half-torn-down driver, so finalizers and the
queue do nothing once `shutting_down` is set. A child process made by fork() must not
touch the Vulkan objects it inherited (the driver's threads and file descriptors belong
to the parent): `forked_child` marks it, finalizers do nothing there either, and every
use raises a GpuError (`check_not_forked`).
"""

from __future__ import annotations

import atexit
import collections
import os
import threading

from ...errors import GpuError

shutting_down = False
forked_child = False  # set in a child of fork() made after Vulkan was started here
vulkan_started = False  # set once a VkInstance exists in this process

_deferred: collections.deque = collections.deque()


def defer(release, *args) -> None:
    """Queue `release(*args)` to run at the next safe point (for finalizers: no locks taken)."""
    if not (shutting_down or forked_child):
        _deferred.append((release, args))


def run_deferred() -> None:
    """Run the releases finalizers queued. Call only where the thread holds no vkncnn lock."""
    if shutting_down or forked_child:
        return
    while True:
        try:
            release, args = _deferred.popleft()  # atomic: threads draining at once share the work
        except IndexError:
            return
        try:
            release(*args)
        except Exception:  # a release that fails (device already gone) must not fail the caller
            pass


def pending_releases() -> int:
    """How many queued releases wait for the next safe point (tests)."""
    return len(_deferred)


# Objects whose GPU work may still be running after a fence wait timed out: freeing their
# memory could let a still-running (or hung) device write into memory reused for something
# else, so they are kept for the life of the process. Only a timeout puts anything here.
_kept_forever: list = []


def keep_forever(obj) -> None:
    _kept_forever.append(obj)


def check_not_forked(what: str) -> None:
    if forked_child:
        raise GpuError(f"{what}: this process was forked from one that had started Vulkan, and "
                       "Vulkan objects cannot cross fork(): start child processes with multiprocessing's "
                       "'spawn' or 'forkserver' method, or fork before the parent first uses the GPU")


def _after_fork_in_child() -> None:
    global forked_child
    if vulkan_started:
        forked_child = True
        _deferred.clear()  # releases of the parent's objects: the parent still owns them


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

# one lock for the instance, its devices and their counts (the instance module also
# guards creating them with it)
lock = threading.RLock()


class RefCounted:
    """Destroyed once retired *and* unused: objects made from it (buffers, pipelines,
    recorders) retain it and release it when they go, so destroy_gpu_instance() may be
    called while some still live. Subclasses provide _destroy() (which sets `destroyed`)
    and may extend _on_retire()."""

    def _init_refcount(self) -> None:
        self.users = 0
        self.retired = False
        self.destroyed = False

    def retain(self) -> None:
        with lock:
            self.users += 1

    def release_ref(self) -> None:
        with lock:
            self.users -= 1
            self._maybe_destroy()

    def retire(self) -> None:
        """Destroy now if nothing uses it, else when its last user goes."""
        with lock:
            self.retired = True
            self._on_retire()
            self._maybe_destroy()

    def _on_retire(self) -> None:
        pass

    def _maybe_destroy(self) -> None:
        if self.retired and self.users <= 0 and not self.destroyed:
            self._destroy()


@atexit.register
def _at_exit() -> None:
    global shutting_down
    shutting_down = True
