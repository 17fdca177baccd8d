"""Refuse a buffer that params alone would make absurdly large (a stride of 10^6 in a
deconvolution, say) before numpy tries to allocate it. Not a layer."""

from __future__ import annotations

from vkncnn.errors import ShapeError
from vkncnn.mat import MAX_ELEMENTS


def check_elements(count: int, what: str) -> None:
    if count > MAX_ELEMENTS:
        raise ShapeError(f"{what} would hold {count} values, more than the {MAX_ELEMENTS} vkncnn allocates")
