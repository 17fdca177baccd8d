"""A progress line on stderr for the commands that work through many items (`vkncnn run` over
a folder, `vkncnn bench` over many models).

It appears only on a terminal, only with no `--quiet`, and only once the work has taken
`delay_s` seconds: short runs and logs stay clean. With the optional `tqdm` package it is a
tqdm bar; without it, one text line redrawn in place. Results still go to stdout: print
them through `Progress.print`, which takes the line away first so the two do not tear.
"""

from __future__ import annotations

import sys
import time

DELAY_S = 2.0      # no progress line for work that ends sooner
REDRAW_S = 0.1     # the text line is redrawn at most this often


def wanted(stream, quiet: bool) -> bool:
    """Whether to show progress on `stream`: a terminal, and not --quiet."""
    isatty = getattr(stream, "isatty", None)
    return not quiet and bool(isatty and isatty())


class Progress:
    """`with Progress(n, "run", quiet=args.quiet) as p:` then `p.advance(label)` per item done."""

    def __init__(self, total: int, desc: str, quiet: bool = False, stream=None, delay_s: float = DELAY_S,
                 use_tqdm: bool = True) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.total, self.desc, self.delay_s = total, desc, delay_s
        self.enabled = wanted(self.stream, quiet)
        self.count = 0
        self._label = ""
        self._start = time.monotonic()
        self._drawn_len = 0     # characters of the text line now on screen (0: none)
        self._last_draw = 0.0
        self._bar = self._tqdm() if self.enabled and use_tqdm else None

    def _tqdm(self):
        try:
            from tqdm import tqdm  # lazy: optional; most runs never show a bar
        except ImportError:
            return None
        return tqdm(total=self.total, desc=self.desc, file=self.stream, delay=self.delay_s, leave=False,
                    dynamic_ncols=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def advance(self, label: str = "") -> None:
        """One more item done; `label` names it (or the next)."""
        self.count += 1
        self._label = label
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(label, refresh=False)
            self._bar.update(1)
            return
        now = time.monotonic()
        if now - self._start >= self.delay_s and (now - self._last_draw >= REDRAW_S or self.count == self.total):
            self._draw(now)

    def print(self, *args, **kwargs) -> None:
        """print() to stdout with the progress line out of the way."""
        if self._bar is not None:
            self._bar.clear()
            print(*args, **kwargs, flush=True)
            self._bar.refresh()
            return
        self._erase()
        print(*args, **kwargs, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._erase()

    def _draw(self, now: float) -> None:
        line = f"{self.desc}: {self.count}/{self.total} {self._label} ({now - self._start:.0f} s)"
        self.stream.write("\r" + line.ljust(self._drawn_len))
        self.stream.flush()
        self._drawn_len = len(line)
        self._last_draw = now

    def _erase(self) -> None:
        if self._drawn_len:
            self.stream.write("\r" + " " * self._drawn_len + "\r")
            self.stream.flush()
            self._drawn_len = 0
