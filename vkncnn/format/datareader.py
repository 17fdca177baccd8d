"""DataReader: where model bytes come from (a path, a file object, bytes, or zeros).

ncnn's readers expose `scan` (text) and `read` (binary). Here a reader only needs
`read(size) -> bytes`; text params are decoded and parsed as they are read. A user
subclass in pyncnn style, `read(self, buf, size) -> int`, is adapted by `as_reader`.

Every source is read in bounded pieces, as the parser or the layers ask, so a path
is exactly as safe as a file object: a 2 GB .param stops at the size limit, a FIFO or
a device is refused before it is opened, a many-GB .bin is never slurped whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..errors import ArgumentTypeError, Error, ModelFileError, ModelFormatError

if TYPE_CHECKING:
    from typing_extensions import Buffer  # collections.abc.Buffer from Python 3.12

# The most bytes asked of a reader in one call when its length is unknown: memory then
# grows with what actually arrives, never with what a header claims.
READ_CHUNK = 1 << 20


class Readable(Protocol):
    """A file object as the readers use it: read(size) gives bytes, or text (encoded as UTF-8),
    or None (nothing yet, read as the end)."""

    def read(self, size: int, /) -> bytes | str | None:
        ...


class DataReader:
    """Base reader. Subclasses implement `read_bytes(size)`; `name` is for messages."""

    name = "<reader>"

    def read_bytes(self, size: int) -> bytes:  # pragma: no cover - interface
        raise ModelFormatError(f"{type(self).__name__} does not implement read_bytes")

    def read(self, buf: Buffer, size: int) -> int:
        """pyncnn's read(buf, size): fill the writable buffer `buf` (bytearray, memoryview,
        numpy array) with up to `size` bytes; the count read. Subclasses in pyncnn style
        override this instead of read_bytes."""
        view = memoryview(buf).cast("B")
        size = min(int(size), len(view))
        data = self.read_bytes(size)
        view[:len(data)] = data
        return len(data)

    def scan(self, format: str, p: object = None) -> int:
        """pyncnn's scan(format, p): text scanning, which vkncnn's readers do not do (the
        text .param parser reads lines itself); 0 values scanned, as ncnn's base reader."""
        return 0

    def read_all(self, limit: int) -> bytes:
        """Up to `limit` bytes: everything if the source holds less."""
        chunks, total = [], 0
        while total < limit:
            chunk = read_some(self, min(READ_CHUNK, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)


def read_some(reader: DataReader, size: int) -> bytes:
    """reader.read_bytes(size), checked: whatever a source does wrong (a closed file, an
    I/O error, a user reader that raises or returns the wrong thing) is a vkncnn error."""
    name = str(getattr(reader, "name", "<reader>"))
    try:
        data = reader.read_bytes(size)
    except Error:
        raise
    except Exception as e:  # exactly the foreign errors a user's source can throw
        raise ModelFileError(f"{name}: reading {size} bytes failed: {type(e).__name__}: {e}") from e
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModelFormatError(f"{name}: read_bytes({size}) returned {type(data).__name__}, expected bytes")
    data = bytes(data)
    if len(data) > size:
        raise ModelFormatError(f"{name}: read_bytes({size}) returned {len(data)} bytes, more than asked")
    return data


def read_exactly(reader: DataReader, size: int) -> bytes:
    """Up to `size` bytes, fewer only at the end of the source.

    A reader that knows its length (`remaining`) was checked against `size` by the
    caller and is asked for it at once; any other is read a chunk at a time, so a
    damaged size field costs only the bytes that really arrive.
    """
    known = getattr(reader, "remaining", None) is not None
    first = read_some(reader, size if known else min(size, READ_CHUNK))
    if len(first) == size or not first:
        return first
    parts, got = [first], len(first)
    while got < size:
        part = read_some(reader, min(size - got, READ_CHUNK))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


class DataReaderFromMemory(DataReader):
    def __init__(self, data: Buffer | str, name: str = "<memory>") -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        try:
            self._view = memoryview(data).cast("B")
        except (TypeError, ValueError, BufferError) as e:
            raise ModelFormatError(f"{name}: expected bytes-like data (bytes, bytearray, a contiguous "
                                   f"memoryview), got {type(data).__name__}: {e}") from None
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
    """A user's file object; a text-mode one is encoded as UTF-8 (never more than asked)."""

    def __init__(self, stream: Readable, name: str | None = None) -> None:
        self._stream = stream
        self._spill = b""  # encoded text beyond what the last call asked for
        self.name = name or str(getattr(stream, "name", "<stream>"))

    def read_bytes(self, size: int) -> bytes:
        if self._spill:
            spilled, self._spill = self._spill[:size], self._spill[size:]
            return spilled
        data = self._stream.read(size)
        if isinstance(data, str):
            encoded = data.encode("utf-8", "surrogateescape")
            data, self._spill = encoded[:size], encoded[size:]
        return data or b""


@dataclass(frozen=True)
class FileLimit:
    """What a path must hold: `max_bytes` (None: no limit) and the error past it."""

    kind: str = "model"
    max_bytes: int | None = None
    error: type[Error] = ModelFormatError


class DataReaderFromFile(DataReader):
    """A regular file opened by path and read as asked; `close()` releases it.

    `remaining` comes from the size fstat gave at open, so a weight request larger
    than the file is refused before anything is allocated.
    """

    def __init__(self, path: str | bytes | os.PathLike, limit: FileLimit = FileLimit()) -> None:
        self.name = _display(path)
        fd, self.size = _open_regular(path, self.name, limit)
        try:
            self._file = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        self._pos = 0

    @property
    def remaining(self) -> int:
        return max(0, self.size - self._pos)

    def read_bytes(self, size: int) -> bytes:
        data = self._file.read(size)
        self._pos += len(data)
        return data

    def close(self) -> None:
        self._file.close()


def _display(path: str | bytes | os.PathLike) -> str:
    return os.fsdecode(path) if isinstance(path, bytes) else str(path)


_NOT_REGULAR = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket")]


def _check_regular(st: os.stat_result, name: str, limit: FileLimit) -> None:
    if not stat.S_ISREG(st.st_mode):
        what = next((text for test, text in _NOT_REGULAR if test(st.st_mode)), "not a regular file")
        raise ModelFileError(f"{name}: is {what}; expected a regular {limit.kind} file")
    if limit.max_bytes is not None and st.st_size > limit.max_bytes:
        raise limit.error(f"{name}: {st.st_size} bytes, larger than the {limit.max_bytes}-byte limit "
                          f"for a {limit.kind} file")


def _open_regular(path: str | bytes | os.PathLike, name: str, limit: FileLimit) -> tuple[int, int]:
    """A read-only descriptor of a regular file and its size.

    stat first, so a FIFO, a device or a directory is refused without being opened
    (opening a FIFO blocks until a writer comes; opening some devices acts on them).
    The open itself is non-blocking in case the path changed in between, and the
    descriptor is checked again with fstat.
    """
    try:
        st = os.stat(path)
    except (ValueError, TypeError) as e:  # a NUL byte, an unencodable name
        raise ModelFileError(f"{name!r}: cannot be used as a path: {e}") from None
    except OSError as e:
        raise ModelFileError(f"{name}: cannot open: {e.strerror or e}") from None
    _check_regular(st, name, limit)
    flags = os.O_RDONLY  # read-only: loading never touches the user's file
    for extra in ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, extra, 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise ModelFileError(f"{name}: cannot open: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        _check_regular(st, name, limit)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


class DataReaderFromEmpty(DataReader):
    """Every read returns zeros: runs a model without weights, as benchncnn does."""

    name = "<empty>"

    def read_bytes(self, size: int) -> bytes:
        return bytes(size)


class _PyncnnStyleReader(DataReader):
    """Adapts a pyncnn-style `read(buf, size) -> int` subclass: buf is a bytearray."""

    def __init__(self, user: DataReader) -> None:
        self._user = user
        self.name = type(user).__name__

    def read_bytes(self, size: int) -> bytes:
        buf = bytearray(size)
        got = self._user.read(buf, size)
        got = size if got is None else int(got)
        return bytes(buf[:max(0, min(got, size))])


def as_reader(source: object, limit: FileLimit = FileLimit()) -> tuple[DataReader, str]:
    """A DataReader and a display name for a path, file object, bytes or DataReader.

    A path becomes a DataReaderFromFile that the caller must close (`opened_reader`
    does); `limit` refuses a larger file before a byte of it is read.
    """
    if isinstance(source, DataReader):
        if type(source).read_bytes is DataReader.read_bytes and type(source).read is not DataReader.read:
            wrapped = _PyncnnStyleReader(source)
            return wrapped, wrapped.name
        return source, str(getattr(source, "name", "<reader>"))
    if isinstance(source, (bytes, bytearray, memoryview)):
        return DataReaderFromMemory(source), "<memory>"
    if isinstance(source, (str, os.PathLike)):
        try:
            path = os.fspath(source)
        except TypeError as e:  # a PathLike whose __fspath__ returns something else
            raise ModelFileError(f"{type(source).__name__}: not a usable path: {e}") from None
        reader = DataReaderFromFile(path, limit)
        return reader, reader.name
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        if getattr(source, "closed", False) is True:
            raise ModelFileError(f"{name}: the file object is closed; expected an open file")
        return DataReaderFromStream(source, name), name
    raise ArgumentTypeError(
        f"expected a path, bytes, a file object or a DataReader, got {type(source).__name__}")


@contextlib.contextmanager
def opened_reader(source: object, limit: FileLimit = FileLimit()) -> Iterator[tuple[DataReader, str]]:
    """`as_reader` as a context: a file this opened (a path) is closed on the way out;
    a file object or reader the caller gave stays as it is."""
    reader, name = as_reader(source, limit)
    try:
        yield reader, name
    finally:
        if isinstance(reader, DataReaderFromFile):
            reader.close()
