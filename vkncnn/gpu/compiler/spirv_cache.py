"""On-disk SPIR-V cache: compile a given shader text with a given compiler once per machine.

Key: sha256 over the exact text handed to the compiler (includes expanded, preamble and
defines spliced in) and the compiler's identity (library or glslangValidator, its version,
the target environment). Anything that changes the SPIR-V changes the key, so entries never
need invalidating; stale ones are simply never asked for again.

Folder: $VKNCNN_CACHE_DIR, else spirv/ in the platform's cache folder (user_dirs.py:
~/.cache/vkncnn/spirv on Linux). One file per entry, <key>.spv, written
to a temporary name then renamed (atomic on POSIX), so concurrent processes never read half a
file. Each file starts with a small header carrying the payload's sha256: a truncated or
corrupt file fails the check, counts as a miss, and the next store rewrites it. An unwritable
folder just means no caching.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from ...user_dirs import user_cache_root

_MAGIC = b"VKNCSPV1"
_SPIRV_MAGIC = 0x07230203
KEY_VERSION = "vkncnn-spirv-cache-1"


def cache_dir() -> Path:
    env = os.environ.get("VKNCNN_CACHE_DIR")
    return Path(env) if env else user_cache_root() / "spirv"


def cache_key(compiler_input: str, compiler_identity: str) -> str:
    h = hashlib.sha256()
    for part in (KEY_VERSION, compiler_identity, compiler_input):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def looks_like_spirv(data: bytes) -> bool:
    return len(data) >= 20 and len(data) % 4 == 0 and int.from_bytes(data[:4], "little") == _SPIRV_MAGIC


def load(key: str, folder: Path | None = None) -> bytes | None:
    """The cached SPIR-V for key, or None on a miss or a damaged entry."""
    payload = read_checked((folder or cache_dir()) / f"{key}.spv", _MAGIC)
    return payload if payload is not None and looks_like_spirv(payload) else None


def store(key: str, spirv: bytes, folder: Path | None = None) -> bool:
    """Write an entry atomically; False (and no error) if the folder is not writable."""
    return write_checked((folder or cache_dir()) / f"{key}.spv", _MAGIC, spirv)


# -- checked files, shared with pipeline_cache.py ----------------------------------------
def read_checked(path: Path, magic: bytes, max_bytes: int | None = None) -> bytes | None:
    """The payload of a file written by write_checked, or None when it is missing, larger
    than max_bytes, not ours (magic) or damaged (sha256)."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes + len(magic) + 32:
            return None
        blob = path.read_bytes()
    except OSError:
        return None
    header = len(magic) + 32
    payload = blob[header:]
    if blob[: len(magic)] != magic or blob[len(magic):header] != hashlib.sha256(payload).digest():
        return None
    return payload


def write_checked(path: Path, magic: bytes, payload: bytes) -> bool:
    """magic + sha256(payload) + payload, written to a temporary name and renamed (atomic
    on POSIX: concurrent processes never read half a file). False if it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(magic + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    return True
