"""Lifetimes of the Vulkan instance and devices, and the process-exit flag for finalizers.

At interpreter exit the OS reclaims all GPU memory; destroying Vulkan objects from
__del__ in garbage-collection order could call into a half-torn-down driver. Every
finalizer in vkncnn.gpu checks `lifetime.shutting_down` first and then does nothing.
"""

from __future__ import annotations

import atexit
import threading

shutting_down = False

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
