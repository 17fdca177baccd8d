"""The progress line of `vkncnn run` over a folder and `vkncnn bench` over many models:
on a terminal only, never with --quiet, never mixed into stdout."""

from __future__ import annotations

import io
import sys
import types

import numpy as np

from vkncnn.tools import bench, cli
from vkncnn.tools.progress import Progress

from .test_cli import DIGITS_BIN, DIGITS_PARAM, digits_image


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if not installed: the built-in line


def test_text_line_on_a_terminal_is_drawn_then_erased(monkeypatch, capsys):
    _no_tqdm(monkeypatch)
    term = Terminal()
    with Progress(2, "run", stream=term, delay_s=0) as p:
        p.advance("a.npy")
        assert term.getvalue() == "\rrun: 1/2 a.npy (0 s)"
        p.print("result of a")  # the line goes before stdout is written
        p.advance("b.npy")
    line1, line2 = "run: 1/2 a.npy (0 s)", "run: 2/2 b.npy (0 s)"
    assert term.getvalue() == ("\r" + line1 + "\r" + " " * len(line1) + "\r"
                               + "\r" + line2 + "\r" + " " * len(line2) + "\r")
    assert capsys.readouterr().out == "result of a\n"


def test_nothing_before_the_delay(monkeypatch):
    _no_tqdm(monkeypatch)
    term = Terminal()
    with Progress(3, "bench", stream=term, delay_s=3600) as p:
        p.advance("squeezenet")
        p.print("row")
    assert term.getvalue() == ""


def test_quiet_or_no_terminal_means_no_line(monkeypatch):
    _no_tqdm(monkeypatch)
    for stream, quiet in ((Terminal(), True), (io.StringIO(), False)):
        with Progress(2, "run", stream=stream, quiet=quiet, delay_s=0) as p:
            p.advance("a")
            p.advance("b")
        assert stream.getvalue() == ""
        assert not p.enabled


def test_tqdm_draws_the_bar_when_installed(monkeypatch):
    made = []

    class FakeBar:
        def __init__(self, **kwargs):
            made.append(kwargs)
            self.updates, self.closed = 0, False

        def set_postfix_str(self, text, refresh=True):
            self.postfix = text

        def update(self, n):
            self.updates += n

        def clear(self):
            pass

        def refresh(self):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=lambda **kw: FakeBar(**kw)))
    term = Terminal()
    with Progress(4, "bench", stream=term, delay_s=2.5) as p:
        bar = p._bar
        p.advance("mobilenet")
    assert made == [{"total": 4, "desc": "bench", "file": term, "delay": 2.5, "leave": False, "dynamic_ncols": True}]
    assert bar.updates == 1 and bar.postfix == "mobilenet" and bar.closed
    assert term.getvalue() == ""  # the built-in line stayed off


def test_run_over_a_folder_writes_no_progress_when_captured(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):
        np.save(folder / f"d{i}.npy", digits_image(i))
    assert cli.main(["run", DIGITS_PARAM, DIGITS_BIN, "--input", f"in0={folder}"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert [line.split()[0] for line in captured.out.splitlines() if not line.startswith(" ")] == \
        ["d0.npy", "d1.npy", "d2.npy"]


def test_bench_over_models_writes_no_progress_when_captured(capsys):
    assert bench.main(["--cpu", "--threads", "1", "--loops", "1", "--warmup", "0", "--settle-ms", "0",
                       "--models", "squeezenet,shufflenet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    rows = [line.split()[0] for line in captured.out.splitlines()[2:-1]]
    assert rows == ["squeezenet", "shufflenet"]
