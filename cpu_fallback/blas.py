"""How many BLAS threads a matrix product gets.

The extractor gives BLAS opt.num_threads for the whole forward pass. A second
thread pays only for large products: each parallel call has to wake the other
thread and wait for it, which costs little on an idle machine but up to a
scheduler time slice when that core is busy (a second process, or another
runtime's spinning worker threads). So small products run on the calling thread
and only those of at least PARALLEL_MACS multiply-adds use the full count.
"""

from __future__ import annotations

from vkncnn import blas_threads

# measured on the benchmark models with 2 cores, interleaved with another runtime
# whose idle threads spin: from 8M to 30M the small models got 10-25% faster and the
# large ones stayed within noise; never threading cost resnet50 10%
PARALLEL_MACS = 30_000_000


class BlasThreads:
    """`with BlasThreads(macs, limit):` runs the block's products on 1 thread when
    `macs` (the largest product's multiply-adds) is small, then restores `limit`."""

    __slots__ = ("limit", "threads")

    def __init__(self, macs: int, limit: int) -> None:
        self.limit = max(1, int(limit))
        self.threads = self.limit if macs >= PARALLEL_MACS else 1

    def __enter__(self) -> BlasThreads:
        _use(self.threads)
        return self

    def __exit__(self, *exc) -> None:
        _use(self.limit)


def _use(n: int) -> None:
    # set_blas_threads asks the OS for the CPU count on every call (a syscall): skip it
    # when the count already in force is the one wanted
    if blas_threads._current != min(n, _CPUS):
        blas_threads.set_blas_threads(n)


_CPUS = blas_threads.available_cpus()
