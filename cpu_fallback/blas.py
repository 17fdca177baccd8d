"""How many BLAS threads a matrix product gets.

The extractor gives BLAS opt.num_threads for the whole forward pass (fewer while
other processes keep CPUs busy: vkncnn/blas_threads.py). A second thread pays only
for large products: each parallel call has to wake the other thread and wait for it,
which costs little on an idle machine but up to a scheduler time slice when that
core is busy. So small products run on the calling thread and only those of at
least PARALLEL_MACS multiply-adds use the full count.
"""

from __future__ import annotations

from vkncnn import blas_threads

# measured on the benchmark models, interleaved with real ncnn in settled blocks as
# `vkncnn bench` runs them (quiet before each block, so neither runtime's idle threads
# still spin): lowering the threshold from 30M to 2M made every model measured faster,
# the small nets most; 1M was within noise of 2M. A core kept busy by another process
# stalls every threaded call, so vkncnn.blas_threads.update_load_cap then holds BLAS to
# one thread for the pass, which under such a load measured faster than even the 30M
# threshold without the cap (figures: docs/perf-notes.md,
# "BLAS threads: from 2M multiply-adds" and "BLAS threads under load (the load cap)").
PARALLEL_MACS = 2_000_000

# a product of one row (InnerProduct on a vector) reads every weight once: memory, not
# arithmetic, bounds it, and a second thread doubles the bandwidth from far smaller sizes.
# Measured with the weights out of cache, as a forward pass finds them: the larger
# classifier products took about half the time, smaller ones gained nothing, and whole
# models got faster (figures: docs/perf-notes.md, "BLAS threads for one-row products").
PARALLEL_VECTOR_MACS = 500_000


class BlasThreads:
    """`with BlasThreads(macs, limit):` runs the block's products on 1 thread when
    `macs` (the largest product's multiply-adds) is small, then restores `limit`.
    `vector`: the products have a single row (PARALLEL_VECTOR_MACS applies)."""

    __slots__ = ("limit", "threads")

    def __init__(self, macs: int, limit: int, vector: bool = False) -> None:
        self.limit = max(1, int(limit))
        self.threads = self.limit if macs >= (PARALLEL_VECTOR_MACS if vector else PARALLEL_MACS) else 1

    def __enter__(self) -> BlasThreads:
        _use(self.threads)
        return self

    def __exit__(self, *exc) -> None:
        _use(self.limit)


def _use(n: int) -> None:
    # set_blas_threads asks the OS for the CPU count on every call (a syscall): skip it
    # when the count already in force is the one wanted
    if blas_threads._current != max(1, min(n, _CPUS, blas_threads._cap)):
        blas_threads.set_blas_threads(n)


_CPUS = blas_threads.available_cpus()
