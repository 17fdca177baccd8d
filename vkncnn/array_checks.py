"""Checks every array vkncnn takes or allocates goes through: ints as pybind takes them,
array-likes numpy can read, and buffers within the machine's budget."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import SupportsIndex, TypeGuard

import numpy as np

from .errors import MatAllocationError, MatError
from .memory_budget import default_budget, human

MAX_ELEMENTS = 1 << 33  # the most values any buffer vkncnn allocates may hold


def is_int(value: object) -> TypeGuard[int | np.integer]:
    """An int as pybind's int caster takes it: Python or numpy integers, never bool or float."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_buffer(shape: Iterable[SupportsIndex], itemsize: int, what: str) -> None:
    """Refuse, before allocating, a buffer larger than MAX_ELEMENTS values or than the
    machine's per-buffer memory budget (vkncnn/memory_budget.py: half the memory the
    process can have), the budget every layer allocation is held to: beyond it numpy
    would raise MemoryError or, where the kernel overcommits, hand out pages that the
    OOM killer takes back later by killing the process."""
    count = math.prod(int(n) for n in shape)  # exact: an int64 product can wrap
    if count > MAX_ELEMENTS:
        raise MatAllocationError(f"{what}: {count} values, more than the {MAX_ELEMENTS} (2^33) any buffer "
                                 "may hold")
    nbytes, budget = count * itemsize, default_budget()
    if nbytes > budget:
        raise MatAllocationError(f"{what}: needs {nbytes} bytes ({human(nbytes)}), more than this machine's "
                                 f"memory budget of {budget} bytes ({human(budget)}; vkncnn/memory_budget.py)")


def as_array(value: object, what: str) -> np.ndarray:
    """np.asarray with what numpy throws for odd input (ragged lists, objects whose
    __array__ fails) made a MatError."""
    try:
        return np.asarray(value)
    except MemoryError:
        raise MatAllocationError(f"{what}: not enough memory to read {type(value).__name__} as an array") from None
    except Exception as e:  # the foreign errors an arbitrary object can cause
        raise MatError(f"{what}: expected an array of numbers, got {type(value).__name__} that numpy cannot "
                       f"read as one ({type(e).__name__}: {e})") from None
