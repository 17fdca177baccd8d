"""One fuzz case run, and the worker process that runs case after case for the pool.

`execute(case)` builds a Net from the case's bytes, loads weights, feeds the inputs,
extracts every output, and says how it ended: "ok", the vkncnn.Error class name, or a
failure: FOREIGN (any other exception, also one that a layer wrapper turned into a
LayerError: the cause is what counts) or BLOWUP (numpy's own MemoryError: an allocation
no budget check foresaw). Crashes, hangs and memory growth need a second process to see:
tools/dev/fuzz_pool.py watches workers running `main()` here.

Protocol on the worker's stdin/stdout: 4-byte little-endian length + a pickle; the
worker answers "ready" once, then one result dict per case. Anything else the process
prints goes to /dev/null (stdout) or the pool's log file (stderr: faulthandler's
traceback of a crash).
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import struct
import sys
import time
import traceback
import warnings

import numpy as np

from .fuzz_cases import Case

# generated weights stop here (a .bin this short, as far as the loader knows): resnet18's
# 46 MB fit; their re-laid-out copies at load stay within the default margin
WEIGHT_CAP = 48 << 20


# -- memory readings ---------------------------------------------------------------------------
def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    """Make VmHWM (the peak RSS) start again from now (Linux >= 4.0); False where refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource  # lazy: Unix-only (Windows has none), and only read where /proc is missing

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# -- weights and inputs ------------------------------------------------------------------------
def _reader(mode: str, rng: np.random.Generator, cap: int):
    """A DataReader of `cap` bytes: zeros, N(0, s) fp32 values, or random bytes ('chaos':
    storage flags included). It announces its length, so the weight loader refuses a tensor
    beyond it before allocating, as it does for a real file."""
    import vkncnn

    class FuzzReader(vkncnn.DataReader):
        name = f"<{mode} weights>"

        def __init__(self) -> None:
            self.remaining = cap
            self.pool = rng.standard_normal(1 << 16).astype(np.float32) * np.float32(rng.choice([0.05, 0.5, 2.0]))

        def read_bytes(self, size: int) -> bytes:
            size = max(0, min(size, self.remaining))
            self.remaining -= size
            if mode == "chaos":
                return rng.bytes(size)
            if mode == "zero" or size == 4:  # 4 bytes: a storage flag (fp32) or one value
                return bytes(size)
            n = size // 4
            start = int(rng.integers(len(self.pool)))
            values = np.resize(np.roll(self.pool, -start), n)
            return values.tobytes() + bytes(size - 4 * n)

    return FuzzReader()


def _recorded_weights(case: Case, rng: np.random.Generator, cap: int) -> bytes | None:
    """Weights as the layer fuzzer makes them (scaled by fan-in, positive variances), asked
    from the layers themselves; None when recording fails in any way (the real load then
    reproduces whatever a layer does wrong, through Net's own path)."""
    import vkncnn
    from vkncnn.errors import WeightError
    from vkncnn.format.recording_modelbin import RecordingModelBin

    class Capped(RecordingModelBin):
        total = 0

        def load_flat(self, n, type_):
            self.total += 4 * int(n)
            if self.total > cap:
                raise WeightError("generated weights over the fuzzer's cap")
            return super().load_flat(n, type_)

    try:
        net = vkncnn.Net()
        net.opt.use_vulkan_compute = False
        _load_param(net, case)
        mb = Capped(int(rng.integers(1 << 31)))
        for layer in net.layers():
            mb.start_layer(layer)
            mb.layer_name = layer.name
            layer.load_model(mb)
        return b"".join(mb.chunks)
    except Exception:  # noqa: BLE001 - see the docstring
        return None


def _input(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "int32":
        x = rng.integers(0, 16, size=shape).astype(np.int32)
        if x.size and rng.random() < 0.2:
            x.flat[int(rng.integers(x.size))] = rng.choice([-1, 1 << 20, -(2**31), 2**31 - 1])
        return x
    x = rng.uniform(-3, 3, size=shape).astype(np.float32)
    if x.size and rng.random() < 0.15:  # a few values that break arithmetic
        for _ in range(int(rng.integers(1, 4))):
            x.flat[int(rng.integers(x.size))] = rng.choice([0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 1e-40])
    return x


# -- one case ----------------------------------------------------------------------------------
def _load_param(net, case: Case) -> None:
    if case.fmt == "binary":
        net.load_param_bin(case.param)
    else:
        net.load_param(case.param)


def run_extract(case: Case, budget: int) -> None:
    """Build, load and run the case's net; raises whatever vkncnn raises."""
    import vkncnn

    rng = np.random.default_rng(case.index)
    cap = WEIGHT_CAP
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = case.gpu
    net.opt.num_threads = 1
    net.opt.memory_budget = budget
    _load_param(net, case)
    if case.weights:
        net.load_model(case.weights)
    elif case.fill == "recorded":
        weights = _recorded_weights(case, rng, cap)
        net.load_model(weights if weights is not None else _reader("normal", rng, cap))
    elif case.fill != "none":
        net.load_model(_reader(case.fill, rng, cap))
    with net.create_extractor() as ex:
        for name, shape, dtype in case.inputs:
            ex.input(name, vkncnn.Mat(_input(tuple(shape), dtype, rng)))
        for name in case.outputs if case.outputs is not None else net.output_names():
            _, out = ex.extract(name)
            out.numpy()


def _harness_check(case: Case, budget: int) -> None:
    """Cases that must each be caught as a failure: the fuzzer cannot pass silently. And
    "cold", which spins on its first run only (the file named by its param marks that run),
    as a case does that compiles its shaders into empty caches: it must pass."""
    mode = case.mode
    if mode == "cold":
        marker = case.param.decode()
        if os.path.exists(marker):
            return
        open(marker, "w").close()
        mode = "spin"
    if mode == "raise":
        raise KeyError("a foreign exception the fuzzer must report")
    if mode == "spin":
        while True:
            pass
    if mode == "sleep":
        time.sleep(3600)
    if mode == "abort":
        os.abort()
    if mode == "hog":
        hog = np.ones(4 * budget // 8 + (64 << 20) // 8)  # touched: resident, beyond budget + margin
        time.sleep(0.5)
        del hog


def _foreign_cause(exc: BaseException) -> BaseException | None:
    """The non-vkncnn exception that a LayerError (or a MemoryBudgetError) was made from:
    wrapping names the layer for users, but the exception underneath is the bug."""
    from vkncnn.errors import Error, LayerError, MemoryBudgetError

    e = exc
    while e.__cause__ is not None:
        cause = e.__cause__
        if not isinstance(cause, Error) and isinstance(e, (LayerError, MemoryBudgetError)):
            return cause
        e = cause
    return None


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def execute(case: Case, budget: int) -> tuple[str, str]:
    """(outcome, detail): 'ok', a vkncnn.Error class name, or FOREIGN / BLOWUP with the
    exception and its traceback."""
    from vkncnn.errors import Error

    from .fuzz_load import run_case as run_load_case

    try:
        if case.mode == "load":
            outcome = run_load_case(case.fmt, case.param, case.weights, math.inf)
            if outcome.startswith("FAIL"):
                return ("BLOWUP" if "memory" in outcome else "FOREIGN"), outcome
            return outcome, ""
        if case.mode != "extract":
            _harness_check(case, budget)
            return "ok", ""
        run_extract(case, budget)
        return "ok", ""
    except Error as e:
        cause = _foreign_cause(e)
        if cause is None:
            return type(e).__name__, _short(e)
        kind = "BLOWUP" if isinstance(cause, MemoryError) else "FOREIGN"
        trace = "".join(traceback.format_exception(cause)[-6:])
        return kind, f"{_short(e)}\n  caused by {_short(cause)}\n{trace}"
    except Exception as e:  # noqa: BLE001 - exactly what the fuzzer hunts
        trace = "".join(traceback.format_exception(e)[-8:])
        return ("BLOWUP" if isinstance(e, MemoryError) else "FOREIGN"), f"{_short(e)}\n{trace}"


def measure(case: Case, budget: int) -> dict:
    """execute() with its CPU time and its peak resident memory above the start; for a GPU
    case on a CPU Vulkan device (lavapipe), also the peak device memory, which lives in this
    process's RSS there and was held to the budget buffer by buffer as it was allocated."""
    import gc

    gc.collect()  # the last case's garbage is not this case's memory
    device_counted = case.gpu and _device_is_host_memory()
    if device_counted:
        from vkncnn.gpu.vulkan.allocator import live_device_bytes, peak_device_bytes, reset_peak_device_bytes
        device_before = live_device_bytes()
        reset_peak_device_bytes()
    exact = _reset_peak()
    before = rss()
    t0 = time.process_time()
    outcome, detail = execute(case, budget)
    cpu = time.process_time() - t0
    peak = _peak()
    device = max(0, peak_device_bytes() - device_before) if device_counted else 0
    return {"outcome": outcome, "detail": detail, "cpu": cpu, "growth": max(0, peak - before),
            "device": device, "rss": before, "exact_peak": exact}


def _device_is_host_memory() -> bool:
    """Is the default Vulkan device a CPU device, whose device memory is this process's RAM?"""
    import vkncnn

    try:
        return vkncnn.get_gpu_count() > 0 and vkncnn.get_gpu_info(vkncnn.get_default_gpu_index()).type() == 3
    except vkncnn.Error:
        return False


# -- the worker process ------------------------------------------------------------------------
def write_frame(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def read_frame(stream):
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("<I", head)
    return pickle.loads(stream.read(n))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    budget = int(argv[0])
    gpu = len(argv) > 1 and argv[1] == "gpu"
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints must not corrupt the protocol
    requests = sys.stdin.buffer
    import faulthandler

    faulthandler.enable()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the pool asks where a hang is
    warnings.simplefilter("ignore")  # overflow in a matmul of hostile values is expected
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pool's to handle
    import vkncnn
    import vkncnn.layers  # noqa: F401 - every layer module imported before the baseline

    if gpu and vkncnn.get_gpu_count() == 0:
        write_frame(replies, {"ready": False, "detail": "no Vulkan device"})
        return 1
    import gc

    gc.freeze()  # the modules' objects: the collection before each case then skips them (10 -> 1 ms)
    write_frame(replies, {"ready": True, "rss": rss()})
    while True:
        case = read_frame(requests)
        if case is None:
            return 0
        try:  # the log holds only the current case's stderr: a crash's traceback
            os.ftruncate(2, 0)
            os.lseek(2, 0, os.SEEK_SET)
        except OSError:
            pass
        write_frame(replies, measure(case, budget))


if __name__ == "__main__":
    sys.exit(main())
