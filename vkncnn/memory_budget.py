"""The memory budget: the most bytes one layer may ask for at once, on either path.

A .param of a hundred bytes can ask for terabytes (an Interp to 40000x40000, a pad of
20000, a Tile of 2*10^8): params, not input sizes, decide those buffers. Every layer
whose output or workspace size its params (or an input's values) drive computes that
size first and calls `check_alloc`, so such a model fails at once with a message instead
of swapping the machine to death or being killed by the OOM killer.

The budget is per allocation: one output, one workspace, one device buffer, one host copy
of a device blob (fp32 on the host where the device holds fp16: twice the bytes). It is not
a running total over the net: what a net holds at once is bounded by its blob count
times this.

`opt.memory_budget` (bytes) sets it per net; 0 or None means the default below.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import SupportsIndex

from .errors import MemoryBudgetError

# Where the machine's memory cannot be read (no sysconf, e.g. Windows): the old cap of
# 2^33 fp32 values per buffer, so nothing that ran before is refused there.
_FALLBACK = 4 << 33

_default: int | None = None


def _physical_memory() -> int | None:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    return total if total > 0 else None


def _cgroup_limit() -> int | None:
    """A container's memory limit (cgroup v2, then v1), which sysconf does not see."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:  # "max" or a huge number: no limit
            return int(text)
    return None


def default_budget() -> int:
    """Half of the memory this process can have (physical RAM, or a container's limit if lower).

    Half, because a layer's inputs, its outputs and numpy's temporaries live at the same
    time: a single buffer of more than half the memory cannot be part of a run that
    finishes, while every buffer of a model that fits in memory at all stays under it.
    """
    global _default
    if _default is None:
        sizes = [s for s in (_physical_memory(), _cgroup_limit()) if s]
        _default = min(sizes) // 2 if sizes else _FALLBACK
    return _default


def budget_of(opt: object) -> int:
    """opt.memory_budget in bytes (opt: an Option, or anything else that may carry the
    attribute), or the default when it is unset, 0 or None."""
    budget = getattr(opt, "memory_budget", None)
    return int(budget) if budget else default_budget()


def human(n: int) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} B"


def check_alloc(opt: object, shape_or_count: SupportsIndex | Iterable[SupportsIndex], itemsize: int = 4,
                what: str = "the output") -> None:
    """Raise MemoryBudgetError if a buffer of `shape_or_count` items (a count, or a shape as
    a sequence of ints) of `itemsize` bytes would exceed the budget. Call it before
    allocating; a shape with a dim <= 0 passes (the caller's own shape checks report it).
    opt: an Option or anything else that may carry `memory_budget` (a Vulkan allocator);
    None for the default budget.

    Layers call this on every run: the path for a buffer within the budget is one product
    and one comparison (about a microsecond)."""
    if hasattr(shape_or_count, "__index__"):
        count = int(shape_or_count)
    else:
        # Python ints: numpy's int64 would wrap around on a hostile product
        count = math.prod(map(int, shape_or_count))
    budget = getattr(opt, "memory_budget", None) or _default or default_budget()
    if count * itemsize <= budget:
        return
    if hasattr(shape_or_count, "__index__"):
        shown = f"of {count} values"
    else:
        dims = tuple(int(n) for n in shape_or_count)
        if min(dims, default=1) <= 0:
            return  # an even number of negative dims: not a size, the caller's checks say why
        shown = f"of shape {dims}"
    _refuse(count * itemsize, int(budget), f"{what} {shown}")


def _refuse(size: int, budget: int, described: str) -> None:
    raise MemoryBudgetError(f"{described} would take {size} bytes ({human(size)}), over the memory budget "
                            f"of {budget} bytes ({human(budget)}); if the model really needs that, raise "
                            f"net.opt.memory_budget (bytes) before creating the extractor")


def from_memory_error(exc: MemoryError, where: str) -> MemoryBudgetError:
    """numpy's own MemoryError (a buffer the machine could not give) as a vkncnn error, for
    the code that runs layers to raise in its place."""
    return MemoryBudgetError(f"{where}: the machine could not give a buffer ({exc}), although it was within "
                             f"the memory budget; lower net.opt.memory_budget (bytes, default "
                             f"{human(default_budget())}) to have such models refused up front")
