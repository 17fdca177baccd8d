"""vkncnn's logger and its one-time warnings.

`logging.getLogger("vkncnn")` reports what the runtime decides: the Vulkan device chosen
and why, the layers that run on the host between GPU steps, each convolution's and matrix
product's kernel (DEBUG), where a shader's SPIR-V came from and which compiler built it.
Turn it on with `logging.basicConfig(level=logging.INFO)` (or DEBUG for the kernels).

`warn_once` raises a user-facing RuntimeWarning once per distinct message, pointing at the
first line outside vkncnn's runtime (the user's call), not at vkncnn's own code.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .layer import Layer

logger = logging.getLogger("vkncnn")

_warned: set[str] = set()


_HERE = os.path.dirname(os.path.abspath(__file__))


def _both_spellings(*parts: str) -> set[str]:
    """A folder as imported and resolved (a checkout links cpu_fallback/, shaders/, tools/ in)."""
    path = os.path.join(_HERE, *parts)
    return {path + os.sep, os.path.realpath(path) + os.sep}


# frames in these are vkncnn's own, not the caller's; tools/ is not among them: a command's
# own line is where its user looks
_RUNTIME_DIRS = tuple(_both_spellings() | _both_spellings("cpu_fallback") | _both_spellings("shaders"))
_TOOLS_DIRS = tuple(_both_spellings("tools"))


def _is_runtime_file(filename: str) -> bool:
    spellings = (os.path.abspath(filename), os.path.realpath(filename))
    if any(p.startswith(_TOOLS_DIRS) for p in spellings):
        return False
    return any(p.startswith(_RUNTIME_DIRS) for p in spellings)


def user_stacklevel() -> int:
    """The `stacklevel` that makes warnings.warn, called by the function calling this one,
    name the first frame outside vkncnn's runtime (whatever depth the warning comes from)."""
    level = 1  # warnings.warn's caller
    frame: FrameType | None = sys._getframe(1)  # that caller
    while frame is not None and _is_runtime_file(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def warn_once(message: str) -> None:
    """One RuntimeWarning per distinct message per process (e.g. 'no Vulkan device'),
    also sent to the logger; it points at the user's line."""
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())


def log_kernel(layer: Layer, kernel: str, why: str) -> None:
    """DEBUG: the kernel a layer's GPU step records, and why that one (recorded once per plan)."""
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("layer %r (%s): %s: %s", getattr(layer, "name", "?"), getattr(layer, "type", "?"), kernel, why)
