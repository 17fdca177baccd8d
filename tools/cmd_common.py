"""What the `vkncnn` subcommands share: their error type and the parsers of option values.

Option values are checked where argparse reads them (a malformed `--shape` is a usage
error, exit 2); what can only be checked against a model (an input name it does not have)
raises CommandError later, which the command line prints as one line and exits 1.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

Shape = tuple[int, ...]


class CommandError(Exception):
    """A failure the user can fix (a missing file, a shape the model lacks): printed as one
    line, without a traceback."""


_DIMS = re.compile(r"\d+(?:[,x]\d+)*")


def parse_shape(text: str) -> tuple[str | None, Shape]:
    """`NAME=3,32,32`, `NAME=3x32x32`, or the dims alone (for a model with one input).

    Dims are numpy order, as np.array(mat).shape: (w,), (h, w), (c, h, w), (c, d, h, w).
    The name is what comes before the last `=`, so blob names may hold any other character.
    """
    name, sep, dims = text.rpartition("=")
    dims = dims.strip().lower()
    if not _DIMS.fullmatch(dims):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a shape: give NAME=C,H,W (or NAME=CxHxW, numpy order), e.g. data=3,224,224")
    shape = tuple(int(v) for v in re.split(r"[,x]", dims))
    if not 1 <= len(shape) <= 4:
        raise argparse.ArgumentTypeError(f"{text!r}: a shape has 1 to 4 dims, got {len(shape)}")
    if sep and not name:
        raise argparse.ArgumentTypeError(f"{text!r}: the input name before '=' is empty")
    return (name if sep else None), shape


def parse_floats(text: str) -> list[float]:
    """`104,117,123` -> [104.0, 117.0, 123.0] (one value per channel)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def non_negative_float(text: str) -> float:
    """A time or amount that may be 0 but not negative, nor NaN or infinite."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def parse_size(text: str) -> tuple[int, int]:
    """`W,H` (or `WxH`) -> (w, h), both positive."""
    parts = re.split(r"[,x]", text.strip().lower())
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: give W,H, e.g. 224,224")
    return int(parts[0]), int(parts[1])


def existing_file(path: str, what: str) -> Path:
    """`path` as a Path, or a CommandError that says what was looked for."""
    p = Path(path)
    if not p.exists():
        raise CommandError(f"{what} {path}: no such file")
    if p.is_dir():
        raise CommandError(f"{what} {path} is a folder, not a file")
    return p


def named_shapes(given: list[tuple[str | None, Shape]], inputs: list[str]) -> dict[str, Shape]:
    """--shape values keyed by input name; a nameless one goes to a model's only input."""
    shapes: dict[str, Shape] = {}
    for name, shape in given:
        if name is None:
            if len(inputs) != 1:
                raise CommandError(f"--shape {'x'.join(map(str, shape))} has no NAME=, but the model has "
                                   f"{len(inputs)} inputs ({', '.join(inputs) or 'none'}): give NAME=dims")
            name = inputs[0]
        if name not in inputs:
            raise CommandError(f"--shape names {name!r}, which is not an input of the model "
                               f"(inputs: {', '.join(inputs) or 'none'})")
        shapes[name] = shape
    return shapes


def human(n: float) -> str:
    """1234567 -> '1.23M': three significant digits for tables."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.3g}" if isinstance(n, float) else str(n)
