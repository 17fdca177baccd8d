"""Argument checks for Extractor.input() and extract(), kept apart from its evaluation code.

Each one raises an ArgumentError (a ValueError) or ArgumentTypeError (also a TypeError)
that says which call got what, so a float index, a NaN, None or a number where a Mat
belongs fails at the call instead of as a confusing lookup miss or a silent zero Mat.
"""

from __future__ import annotations

from .array_checks import is_int
from .errors import ArgumentError, ArgumentTypeError
from .mat import Mat

_SCALARS = (bool, float, complex, str, bytes, type(None))


def check_blob(blob: object, call: str) -> None:
    """A blob is named by its name (str) or its index (int): nothing else."""
    if not (isinstance(blob, str) or is_int(blob)):
        raise ArgumentTypeError(f"{call}: expected a blob name (str) or index (int), got "
                                f"{type(blob).__name__} {blob!r:.40}")


def check_input(blob: object, mat: object) -> None:
    check_blob(blob, "input()")
    # an int would read as Mat(w): a zero Mat of that width, never what was meant
    if isinstance(mat, _SCALARS) or is_int(mat):
        raise ArgumentTypeError(f"input({blob!r:.40}): expected a Mat or an array of numbers, got "
                                f"{type(mat).__name__} {mat!r:.40}")


def check_extract(blob: object, args: tuple[object, ...], type_: object) -> None:
    """extract(blob[, mat][, type], type=...): mat a Mat, each type 0 or 1."""
    check_blob(blob, "extract()")
    rest = args[1:] if args and isinstance(args[0], Mat) else args
    if len(rest) > 1:
        raise ArgumentError(f"extract({blob!r:.40}): takes at most a Mat and a type after the blob, "
                            f"got {len(args)} more arguments")
    for value in (*rest, type_):
        if not is_int(value):
            raise ArgumentTypeError(f"extract({blob!r:.40}): type must be the int 0 or 1 (or a Mat to fill), "
                                    f"got {type(value).__name__} {value!r:.40}")
        if value not in (0, 1):
            raise ArgumentError(f"extract({blob!r:.40}): type must be 0 or 1, got {value}")
