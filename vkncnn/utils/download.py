"""File helpers of the model zoo. vkncnn never downloads: `download` gives back a file
that is already in place (and matches its hash) and otherwise says where to put it."""

from __future__ import annotations

import hashlib
import os

from ..errors import ModelFileError

__all__ = ["check_sha1", "download"]


def check_sha1(filename: str | os.PathLike, sha1_hash: str) -> bool:
    """Whether the file's sha1 starts with sha1_hash (or sha1_hash with it: the shorter decides)."""
    digest = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    actual = digest.hexdigest()
    n = min(len(actual), len(sha1_hash))
    return actual[:n] == sha1_hash[:n]


def _destination(url: str, path: str | os.PathLike | None) -> str:
    name = url.split("/")[-1]
    if path is None:
        return name
    path = os.path.expanduser(path)
    return os.path.join(path, name) if os.path.isdir(path) else path


def download(url: str, path: str | os.PathLike | None = None, overwrite: bool = False,
             sha1_hash: str | None = None) -> str:
    """The local path that ncnn's download(url, ...) would fill, if the file is already
    there (matching sha1_hash when given, and overwrite not asked for); otherwise a
    ModelFileError naming the URL and where to place the file."""
    fname = _destination(url, path)
    if not overwrite and os.path.isfile(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    if os.path.isfile(fname) and sha1_hash and not check_sha1(fname, sha1_hash):
        why = f"{fname} exists but its sha1 does not start with {sha1_hash}"
    elif overwrite and os.path.isfile(fname):
        why = f"overwrite=True asks for a fresh copy of {fname}"
    else:
        why = f"{fname} does not exist"
    raise ModelFileError(f"vkncnn does not download files: {why}. Fetch {url} yourself and place it at "
                         f"{os.path.abspath(fname)}")
