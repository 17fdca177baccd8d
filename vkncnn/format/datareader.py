"""DataReader: where model bytes come from (a path, a file object, bytes, or zeros).

ncnn's readers expose `scan` (text) and `read` (binary). Here a reader only needs
`read(size) -> bytes`; text params are read whole and parsed as text. A user
subclass in pyncnn style, `read(self, buf, size) -> int`, is adapted by `as_reader`.
"""

from __future__ import annotations

import io
import os

from ..errors import ModelFormatError


class DataReader:
    """Base reader. Subclasses implement `read_bytes(size)`; `name` is for messages."""

    name = "<reader>"

    def read_bytes(self, size: int) -> bytes:  # pragma: no cover - interface
        raise ModelFormatError(f"{type(self).__name__} does not implement read_bytes")

    def read_all(self, limit: int) -> bytes:
        chunks, total = [], 0
        while total < limit:
            chunk = self.read_bytes(min(1 << 20, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)


class DataReaderFromMemory(DataReader):
    def __init__(self, data, name: str = "<memory>") -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self._view = memoryview(data).cast("B")
        self._pos = 0
        self.name = name

    @property
    def remaining(self) -> int:
        return len(self._view) - self._pos

    def read_bytes(self, size: int) -> bytes:
        out = self._view[self._pos:self._pos + size].tobytes()
        self._pos += len(out)
        return out


class DataReaderFromStream(DataReader):
    def __init__(self, stream, name: str | None = None) -> None:
        self._stream = stream
        self.name = name or getattr(stream, "name", "<stream>")

    def read_bytes(self, size: int) -> bytes:
        data = self._stream.read(size)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        return data or b""


class DataReaderFromEmpty(DataReader):
    """Every read returns zeros: runs a model without weights, as benchncnn does."""

    name = "<empty>"

    def read_bytes(self, size: int) -> bytes:
        return bytes(size)


class _PyncnnStyleReader(DataReader):
    """Adapts a pyncnn-style `read(buf, size) -> int` subclass: buf is a bytearray."""

    def __init__(self, user) -> None:
        self._user = user
        self.name = type(user).__name__

    def read_bytes(self, size: int) -> bytes:
        buf = bytearray(size)
        got = self._user.read(buf, size)
        got = size if got is None else int(got)
        return bytes(buf[:max(0, min(got, size))])


def as_reader(source) -> tuple[DataReader, str]:
    """A DataReader and a display name for a path, file object, bytes or DataReader."""
    if isinstance(source, DataReader):
        if type(source).read_bytes is DataReader.read_bytes and hasattr(source, "read"):
            wrapped = _PyncnnStyleReader(source)
            return wrapped, wrapped.name
        return source, source.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        return DataReaderFromMemory(source), "<memory>"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:  # read-only: loading never touches the user's file
                data = f.read()
        except OSError as e:
            raise ModelFormatError(f"{path}: cannot open: {e.strerror or e}") from None
        return DataReaderFromMemory(data, path), path
    if hasattr(source, "read"):
        return DataReaderFromStream(source), getattr(source, "name", "<stream>")
    if isinstance(source, io.IOBase):  # pragma: no cover - covered by hasattr(read)
        return DataReaderFromStream(source), "<stream>"
    raise ModelFormatError(
        f"expected a path, bytes, a file object or a DataReader, got {type(source).__name__}")
