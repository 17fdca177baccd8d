"""Real ncnn in a child process, so a case that segfaults it cannot take the caller down.

The parent (`NcnnWorker`) sends pickled (param text, weights, inputs, output names)
requests over the child's stdin and reads pickled results from its stdout. A child
that dies mid-request is reported as a crash and replaced by a fresh one.
"""

from __future__ import annotations

import pickle
import select
import struct
import subprocess
import sys


def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("peer closed")
    (n,) = struct.unpack("<Q", head)
    data = stream.read(n)
    if len(data) < n:
        raise EOFError("peer closed mid-message")
    return pickle.loads(data)


class NcnnCrashed(Exception):
    """The ncnn child died (segfault, abort) while running a request."""


class NcnnWorker:
    def __init__(self) -> None:
        self.proc = None

    def _start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "vkncnn.tools.dev.ncnn_worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def run(self, param_text: str, weights: bytes, inputs: dict, outputs: list[str], timeout: float = 60.0,
            empty_dims: bool = False, vulkan_fp16a: bool = False):
        """('ok', {name: array}) or ('error', message); raises NcnnCrashed if the child died
        or hung (some invalid-memory cases loop forever in ncnn) for `timeout` seconds.
        `vulkan_fp16a`: ncnn's own Vulkan path with fp16 storage and arithmetic, not its CPU."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            _send(self.proc.stdin, (param_text, weights, inputs, outputs, empty_dims, vulkan_fp16a))
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                self.proc.kill()
                raise EOFError(f"no answer in {timeout:g} s")
            return _recv(self.proc.stdout)
        except (EOFError, BrokenPipeError) as e:
            code = self.proc.wait()
            self.proc = None
            raise NcnnCrashed(f"ncnn child died or hung ({e}; exit {code})") from e

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        self.proc = None


def main() -> None:
    from vkncnn.tools.ncnn_oracle import run_ncnn

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # ncnn's and our prints must not corrupt the protocol stream
    while True:
        try:
            param_text, weights, inputs, outputs, empty_dims, vulkan_fp16a = _recv(stdin)
        except EOFError:
            return
        try:
            reply = ("ok", run_ncnn(param_text, weights, inputs, outputs, empty_dims=empty_dims,
                                    vulkan=vulkan_fp16a, fp16_arithmetic=vulkan_fp16a))
        except Exception as e:  # ncnn rejected the param/model or failed to extract
            reply = ("error", f"{type(e).__name__}: {e}")
        _send(stdout, reply)


if __name__ == "__main__":
    main()
