"""Shared builders for the RNN / GRU / LSTM tests: params and ncnn-ordered weights."""

from __future__ import annotations

import numpy as np

from tests.oracle import rand, raw, tagged

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
BIAS_ROWS = {"RNN": 1, "GRU": 4, "LSTM": 4}


def rnn_params(kind: str, num_output: int, size: int, direction: int = 0, hidden: int | None = None,
               int8: bool = False) -> dict:
    hidden = num_output if hidden is None else hidden
    nd = 2 if direction == 2 else 1
    params = {0: num_output, 1: nd * GATES[kind] * hidden * size, 2: direction}
    if hidden != num_output:
        params[3] = hidden
    if int8:
        params[8] = 1
    return params


def int8_tagged(q: np.ndarray) -> bytes:
    """An int8 weight as ncnn stores it: the int8 flag, the bytes, padding to 4."""
    data = np.asarray(q, np.int8).tobytes()
    return (0x000D4B38).to_bytes(4, "little") + data + b"\0" * (-len(data) % 4)


def rnn_weights(kind: str, num_output: int, size: int, direction: int = 0, hidden: int | None = None,
                int8: bool = False, seed: int = 0) -> list:
    """W_xc, bias_c, W_hc (+ W_hr) (+ int8 scales), in ncnn's load order."""
    hidden = num_output if hidden is None else hidden
    nd = 2 if direction == 2 else 1
    rows = GATES[kind] * hidden
    wx = rand(nd, rows, size, seed=seed, lo=-0.8, hi=0.8)
    bias = rand(nd, BIAS_ROWS[kind], hidden, seed=seed + 1, lo=-0.5, hi=0.5)
    wh = rand(nd, rows, num_output, seed=seed + 2, lo=-0.8, hi=0.8)
    if not int8:
        out = [tagged(wx), tagged(bias), tagged(wh)]
        if hidden != num_output:
            out.append(tagged(rand(nd, num_output, hidden, seed=seed + 3, lo=-0.8, hi=0.8)))
        return out
    sx = 127.0 / np.abs(wx).max(axis=2)
    sh = 127.0 / np.abs(wh).max(axis=2)
    qx = np.clip(np.round(wx * sx[:, :, None]), -127, 127)
    qh = np.clip(np.round(wh * sh[:, :, None]), -127, 127)
    out = [int8_tagged(qx), tagged(bias), int8_tagged(qh)]
    if hidden != num_output:
        out.append(tagged(rand(nd, num_output, hidden, seed=seed + 3, lo=-0.8, hi=0.8)))
    return out + [raw(sx), raw(sh)]


def as_bin(weights: list) -> bytes:
    from tests.oracle import bin_bytes

    parts = []
    for w in weights:
        parts.append(w if isinstance(w, bytes) else bin_bytes([w]))
    return b"".join(parts)
