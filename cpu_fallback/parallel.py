"""Running independent blocks of a kernel on several threads.

numpy releases the GIL inside every ufunc loop, copy and BLAS call, so Python
threads that each work through blocks of a tensor run in parallel as long as the
blocks are large (tens of thousands of elements). This matters where BLAS's own
threading cannot help: the copies and transforms around a matrix product
(Winograd's tile gathers) and long runs of small products.

Blocks are handed out one at a time from a shared counter, so a thread that the
OS preempts (a busy machine) simply takes fewer blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _workers(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="vkncnn-cpu")
            _pool_size = n
        return _pool


def for_each_block(count: int, threads: int, make_worker: Callable[[], Callable[[int], None]]) -> None:
    """Run blocks 0..count-1 on up to `threads` threads (the caller's included).

    `make_worker()` is called once per thread and returns that thread's block function
    (so each thread can own its scratch buffers). Exceptions propagate to the caller.
    """
    threads = max(1, min(int(threads), count))
    if threads == 1:
        work = make_worker()
        for i in range(count):
            work(i)
        return
    counter = iter(range(count))
    lock = threading.Lock()

    def run() -> None:
        work = make_worker()
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            work(i)

    futures = [_workers(threads - 1).submit(run) for _ in range(threads - 1)]
    try:
        run()
    finally:
        for f in futures:
            f.result()
