"""How many BLAS threads a matrix product gets.

The extractor gives BLAS opt.num_threads for the whole forward pass. A second
thread pays only for large products: each parallel call has to wake the other
thread and wait for it, which costs little on an idle machine but up to a
scheduler time slice when that core is busy (a second process, or another
runtime's spinning worker threads). So small products run on the calling thread
and only those of at least PARALLEL_MACS multiply-adds use the full count.
"""

from __future__ import annotations

from vkncnn.blas_threads import set_blas_threads

# measured on the benchmark models, 2 cores shared with a second process: below
# this a 2-thread product loses more in hand-offs than it gains
PARALLEL_MACS = 8_000_000


class BlasThreads:
    """`with BlasThreads(macs, limit):` runs the block's products on 1 thread when
    `macs` (the largest product's multiply-adds) is small, then restores `limit`."""

    __slots__ = ("limit", "threads")

    def __init__(self, macs: int, limit: int) -> None:
        self.limit = max(1, int(limit))
        self.threads = self.limit if macs >= PARALLEL_MACS else 1

    def __enter__(self) -> BlasThreads:
        if self.threads != self.limit:
            set_blas_threads(self.threads)
        return self

    def __exit__(self, *exc) -> None:
        if self.threads != self.limit:
            set_blas_threads(self.limit)
