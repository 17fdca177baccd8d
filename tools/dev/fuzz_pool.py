"""Long-lived worker processes that run fuzz cases, watched from outside.

A worker that dies is a CRASH (its signal and faulthandler's traceback reported); one
that spends more CPU time on a case than the limit, or more wall time than the wall
limit (a sleep or a deadlock uses no CPU), is killed: a HANG; one whose resident memory
grows beyond the hard cap mid-case is killed before it can swap the machine: a BLOWUP.
The worker's own report catches the rest (memory peaks past budget + margin that the
polling missed). After any of these the worker is replaced by a fresh one.

A case past its CPU limit runs once more before it is called a HANG: its first run may have
compiled every shader its net needs into empty caches (a CPU Vulkan device such as lavapipe
compiles them with LLVM, in the case's CPU time), and the second finds them on disk. A loop
that never ends runs past the limit both times.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from .fuzz_cases import Case
from .fuzz_worker import read_frame, write_frame

POLL_S = 0.02
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Limits:
    cpu_s: float = 2.0           # CPU seconds per case (all of the worker's threads)
    wall_s: float = 30.0         # wall seconds per case
    budget: int = 64 << 20       # opt.memory_budget of every net
    margin: int = 320 << 20      # peak RSS growth allowed beyond the budget

    @property
    def blowup(self) -> int:
        return self.budget + self.margin


@dataclass
class Result:
    case: Case
    outcome: str     # ok, a vkncnn.Error class name, FOREIGN, CRASH, HANG, BLOWUP
    detail: str = ""
    cpu: float = 0.0
    growth: int = 0


FAILURES = ("FOREIGN", "CRASH", "HANG", "BLOWUP")


def _cpu_seconds(pid: int) -> float:
    """utime + stime of all the process's threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * _PAGE


class Worker:
    def __init__(self, limits: Limits, gpu: bool) -> None:
        self.limits, self.gpu = limits, gpu
        self.proc = None
        self.case: Case | None = None
        self.cases_run = 0
        self.start()

    def start(self) -> None:
        env = dict(os.environ)
        # one BLAS/OpenMP thread per worker: the pool is the parallelism, and CPU time per
        # case then means the same on any machine
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LP_NUM_THREADS"):
            env[var] = "1"  # LP_NUM_THREADS: lavapipe's rasterizer/compute threads
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vkncnn.tools.dev.fuzz_worker", str(self.limits.budget),
             "gpu" if self.gpu else "cpu"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env)
        hello = read_frame(self.proc.stdout)
        if not hello or not hello.get("ready"):
            self.stop()
            raise RuntimeError(f"fuzz worker did not start: {hello and hello.get('detail')}{self._log_tail()}")
        self.baseline = hello["rss"]
        self.case = None

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.proc = None
        self.log.close()

    def restart(self) -> None:
        self.stop()
        self.start()

    def send(self, case: Case) -> None:
        self.case = case
        self.cases_run += 1
        self.t0 = time.monotonic()
        self.cpu0 = _cpu_seconds(self.proc.pid)
        try:
            write_frame(self.proc.stdin, case)
        except (BrokenPipeError, OSError):
            pass  # it died: the read sees end of file and reports the crash

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def _log_tail(self) -> str:
        try:
            self.log.seek(0)
            text = self.log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return ("\n" + "\n".join(lines[-14:])) if lines else ""

    def collect(self) -> Result:
        """The finished case's result (the worker's stdout is readable)."""
        case, self.case = self.case, None
        reply = read_frame(self.proc.stdout)
        if reply is None:
            code = self.proc.wait()
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
            detail = f"worker {how}{self._log_tail()}"
            self.restart()
            return Result(case, "CRASH", detail)
        result = Result(case, reply["outcome"], reply["detail"], reply["cpu"], reply["growth"])
        # device memory in RSS (a CPU Vulkan device) was held to the budget buffer by buffer as it
        # was allocated; what is judged against budget + margin is the host memory beside it
        host_growth = reply["growth"] - reply.get("device", 0)
        if result.outcome not in FAILURES:
            if reply["cpu"] > self.limits.cpu_s:
                result.outcome, result.detail = "HANG", f"took {reply['cpu']:.2f} s of CPU (limit {self.limits.cpu_s})"
            elif host_growth > self.limits.blowup:
                result.outcome = "BLOWUP"
                result.detail = (f"peak RSS grew {reply['growth'] >> 20} MiB, {host_growth >> 20} MiB of it not device "
                                 f"memory (budget {self.limits.budget >> 20} MiB + margin "
                                 f"{self.limits.margin >> 20} MiB); ended as {reply['outcome']}")
        if result.outcome in FAILURES or reply["rss"] - self.baseline > self.limits.blowup:
            self.restart()  # a fresh process: no leftover heap, peak or leak for the next case
        return result

    def watch(self) -> Result | None:
        """Kill the worker when its case runs past a limit; the result, or None if it runs on."""
        wall = time.monotonic() - self.t0
        try:
            cpu = _cpu_seconds(self.proc.pid) - self.cpu0
            grown = _rss(self.proc.pid) - self.baseline
        except (OSError, IndexError, ValueError):
            return None  # it exited: the read reports it
        if cpu > self.limits.cpu_s:
            what = "HANG", f"killed after {cpu:.2f} s of CPU (limit {self.limits.cpu_s})"
        elif wall > self.limits.wall_s:
            what = "HANG", f"killed after {wall:.1f} s of wall time, {cpu:.2f} s of CPU (limit {self.limits.wall_s})"
        elif grown > 2 * self.limits.blowup:
            what = "BLOWUP", f"killed at {grown >> 20} MiB of RSS growth (limit {self.limits.blowup >> 20} MiB)"
        else:
            return None
        case, self.case = self.case, None
        tail = ""
        if what[0] == "HANG":  # where it hangs: faulthandler dumps the stacks on SIGUSR1
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(0.3)
            tail = self._log_tail()
        self.restart()
        return Result(case, what[0], what[1] + tail, cpu)


def run(cases, limits: Limits, workers: int = 2, gpu: bool = False):
    """Run an iterable of Cases on `workers` processes; yields a Result per case, in
    completion order."""
    pool = [Worker(limits, gpu) for _ in range(max(1, workers))]
    it = iter(cases)
    more = True
    again: list[Case] = []  # past the CPU limit once: to run a second time
    retried: dict[int, Case] = {}  # the cases run a second time, by id() (held: no id is reused)
    try:
        while True:
            for w in pool:
                if w.case is None and (again or more):
                    case = again.pop() if again else next(it, None)
                    if case is None:
                        more = False
                    else:
                        w.send(case)
            busy = [w for w in pool if w.case is not None]
            if not again and not busy:
                return
            ready, _, _ = select.select(busy, [], [], POLL_S)
            finished = [w.collect() for w in ready]
            finished += [r for r in (w.watch() for w in busy if w not in ready) if r is not None]
            for result in finished:
                if result.outcome == "HANG" and result.cpu > limits.cpu_s and id(result.case) not in retried:
                    retried[id(result.case)] = result.case
                    again.append(result.case)
                    continue
                if result.outcome == "HANG" and id(result.case) in retried:
                    result.detail = f"past the limit in both of two runs; {result.detail}"
                yield result
    finally:
        for w in pool:
            w.stop()
