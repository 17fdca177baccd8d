"""Fuzz cases for the sequence layers: RNN, GRU, LSTM, and Embed (the word lookup that feeds them).

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

import numpy as np

from .case import Case
from .draw import chance, channels, extent, shape, tensor


def _recurrent(name):
    def gen(rng):
        inp, hidden, seq = channels(rng), channels(rng), extent(rng, 1, 9)
        direction = int(rng.integers(0, 3))
        nd = 2 if direction == 2 else 1
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[name]
        p = {0: hidden, 1: gates * hidden * inp * nd, 2: direction}
        if name == "LSTM" and chance(rng, 0.3):
            proj = extent(rng, 1, hidden)
            p[0], p[3] = proj, hidden
        return Case(name, p, [tensor(rng, (seq, inp))], tol=2e-4, tol16=2e-2)
    return gen


RECURRENT = {name: _recurrent(name) for name in ("RNN", "GRU", "LSTM")}


def embed(rng):
    n_out, vocab = channels(rng), extent(rng, 2, 20)
    p = {0: n_out, 1: vocab, 2: int(chance(rng, 0.5)), 3: n_out * vocab}
    ids = rng.integers(0, vocab, size=shape(rng, 1, 1, 7)).astype(np.int32)
    return Case("Embed", p, [ids])
