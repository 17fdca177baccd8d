"""Where vkncnn keeps its per-user files: the platform's cache folder.

With the optional `platformdirs` package installed, the folder is the one it names for the
platform (~/.cache/vkncnn on Linux, honouring XDG_CACHE_HOME; ~/Library/Caches/vkncnn on
macOS; %LOCALAPPDATA%\\vkncnn\\Cache on Windows). Without it, XDG_CACHE_HOME/vkncnn, else
~/.cache/vkncnn, which is what platformdirs says on Linux, so installing it moves nothing
there. It stays optional: numpy is vkncnn's only required dependency, and the fallback is
right on the platform vkncnn is built for.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_root() -> Path:
    """The folder under which vkncnn's caches live (spirv/, models/, pipeline caches)."""
    try:
        import platformdirs  # lazy: optional; only where the folder is needed
    except ImportError:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"  # XDG: relative ones are ignored
        return base / "vkncnn"
    return Path(platformdirs.user_cache_dir("vkncnn", appauthor=False))
