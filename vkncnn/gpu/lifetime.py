"""Process-exit flag for finalizers.

At interpreter exit the OS reclaims all GPU memory; destroying Vulkan objects from
__del__ in garbage-collection order could call into a half-torn-down driver. Every
finalizer in vkncnn.gpu checks `lifetime.shutting_down` first and then does nothing.
"""

from __future__ import annotations

import atexit

shutting_down = False


@atexit.register
def _at_exit() -> None:
    global shutting_down
    shutting_down = True
