"""vkncnn's logger and its one-time warnings.

`logging.getLogger("vkncnn")` reports what the runtime decides (the device chosen, why
the numpy path runs); `warn_once` raises a user-facing warning once per distinct message.
"""

from __future__ import annotations

import logging
import warnings

logger = logging.getLogger("vkncnn")

_warned: set[str] = set()


def warn_once(message: str, stacklevel: int = 3) -> None:
    """One RuntimeWarning per distinct message per process (e.g. 'no Vulkan device'),
    also sent to the logger."""
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
