"""Recurrent, int8 and layout layers: LSTM, GRU, RNN, Quantize, Dequantize, Requantize, Packing,
StatisticsPooling (ncnn's tests/test_lstm.cpp, test_gru.cpp, test_rnn.cpp, test_quantize.cpp with
test_quantize_oom.cpp, test_dequantize.cpp, test_requantize.cpp with test_requantize_oom.cpp,
test_packing.cpp, test_statisticspooling.cpp).

The recurrent grids run each shape row fp32 and int8 (int8_scale_term 2: int8 W_xc / W_hc as
ncnn stores them, tagged, plus one fp32 scale per weight row), with no states, with initial and
final states, with initial states only and with final states only. Dequantize's and
Requantize's forced layouts (pack1, pack8) and the oom variants are not reachable through a net:
their shapes and tables run once each, in ncnn's default layout. Int8 inputs and tables are drawn
as ncnn's tests draw them: away from a rounding step, so that two correct implementations
round alike.
"""

from __future__ import annotations

import numpy as np

from .registry import GridCase, case_rng, grid, nc

_INT8_TAG = (0x000D4B38).to_bytes(4, "little")
# not in ncnn's tests: an input with a zero-size axis, per layer (an edge case, always sampled)
_ZERO = (3, 0, 5)

# (size, T, num_output, direction, hidden_size or 0 for num_output), per ncnn test function
_RNN_PLAIN_BI = [(4, 1, 2, 2, 0), (8, 2, 2, 2, 0), (16, 8, 7, 2, 0), (17, 8, 8, 2, 0), (19, 15, 8, 2, 0),
                 (5, 16, 16, 2, 0), (3, 16, 8, 2, 0), (8, 16, 16, 2, 0), (31, 3, 31, 2, 0), (2, 5, 17, 2, 15)]
_RNN_HIDDEN = [(4, 4, 1, 2, 0), (8, 2, 2, 2, 0), (16, 8, 7, 2, 0), (17, 8, 8, 2, 0), (19, 15, 8, 2, 0),
               (5, 16, 16, 2, 0), (3, 16, 8, 2, 0), (2, 5, 79, 2, 33),
               (4, 4, 1, 1, 0), (8, 2, 2, 1, 0), (16, 8, 7, 1, 0), (17, 8, 8, 1, 0), (19, 15, 8, 1, 0),
               (5, 16, 16, 1, 0), (3, 16, 8, 1, 0), (2, 5, 79, 1, 33),
               (4, 2, 1, 0, 0), (8, 2, 2, 0, 0), (16, 8, 7, 0, 0), (17, 8, 8, 0, 0), (19, 15, 8, 0, 0),
               (5, 16, 16, 0, 0), (3, 16, 8, 0, 0), (2, 5, 17, 0, 15)]
_RNN_PLAIN_ONE_WAY = [row for d in (0, 1) for row in
                      [(4, 1, 1, d, 0), (8, 2, 2, d, 0), (16, 8, 7, d, 0), (17, 8, 8, d, 0), (19, 15, 8, d, 0),
                       (5, 16, 16, d, 0), (3, 16, 8, d, 0), (8, 16, 16, d, 0), (2, 5, 17, d, 15)]]
# (initial states given, final states asked for)
_STATE_MODES = {"plain": (False, False), "hidden": (True, True), "hidden_input": (True, False),
                "hidden_output": (False, True)}


def _recurrent_rows() -> list:
    """(row, state mode) in ncnn's order: plain bidirectional, the three state variants, then plain
    forward and reverse."""
    rows = [(r, "plain") for r in _RNN_PLAIN_BI]
    for mode in ("hidden", "hidden_input", "hidden_output"):
        rows += [(r, mode) for r in _RNN_HIDDEN]
    return rows + [(r, "plain") for r in _RNN_PLAIN_ONE_WAY]


def _flagged(arr: np.ndarray) -> bytes:
    """An fp32 weight loaded with type 0: a zero flag word, then the raw floats."""
    return b"\0\0\0\0" + np.ascontiguousarray(arr, "<f4").tobytes()


def _raw(arr: np.ndarray) -> bytes:
    return np.ascontiguousarray(arr, "<f4").tobytes()


def _int8_tagged(q: np.ndarray) -> bytes:
    data = np.ascontiguousarray(q, np.int8).tobytes()
    return _INT8_TAG + data + b"\0" * (-len(data) % 4)


def _away_from_half(rng: np.random.Generator, shape: tuple, lo: float, hi: float, scale) -> np.ndarray:
    """uniform(lo, hi) values whose v * scale is not within 0.05 of a .5 step, so that rounding
    to int8 cannot go either way between two implementations (ncnn's tests draw theirs so)."""
    scale = np.broadcast_to(np.asarray(scale, np.float32), shape)
    v = rng.uniform(lo, hi, size=shape).astype(np.float32)
    while True:
        frac = np.abs(v * scale - np.trunc(v * scale))
        bad = (frac > 0.45) & (frac < 0.55)
        if not bad.any():
            return v
        v[bad] = rng.uniform(lo, hi, size=int(bad.sum())).astype(np.float32)


def _int8_activation(rng: np.random.Generator, shape: tuple, absmax: float = 10.0) -> np.ndarray:
    """A recurrent int8 input: values in [-absmax, absmax] away from quantization steps, with
    -absmax and absmax both present (the dynamic scale is then 127 / absmax)."""
    v = _away_from_half(rng, shape, -absmax, absmax, 127.0 / absmax)
    flat = v.reshape(-1)
    lo, hi = rng.choice(flat.size, size=2, replace=False) if flat.size > 1 else (0, 0)
    flat[lo], flat[hi] = -absmax, absmax
    return v


def _recurrent_case(name: str, index: int, gates: int, bias_rows: int, row: tuple, mode: str,
                    int8: bool) -> GridCase:
    size, t, outch, direction, hidden = row
    # only LSTM has a hidden_size of its own: GRU's and RNN's tests run the same rows without it
    hidden = hidden if hidden and name == "LSTM" else outch
    nd = 2 if direction == 2 else 1
    n_states = 2 if name == "LSTM" else 1
    rng = case_rng(name, index)
    params = {0: outch, 1: hidden * size * gates * nd, 2: direction}
    if name == "LSTM":
        params[3] = hidden
    wx_shape, wh_shape = (nd, gates * hidden, size), (nd, gates * hidden, outch)
    bias = rng.uniform(-1, 1, size=(nd, bias_rows, hidden)).astype(np.float32)
    whr = rng.uniform(-1, 1, size=(nd, outch, hidden)).astype(np.float32) if hidden != outch else None
    if int8:
        params[8] = 2
        wx, wh = (rng.integers(-127, 128, size=s).astype(np.int8) for s in (wx_shape, wh_shape))
        blob = _int8_tagged(wx) + _flagged(bias) + _int8_tagged(wh)
        blob += b"" if whr is None else _flagged(whr)
        blob += b"".join(_raw(rng.uniform(100, 200, size=(nd, gates * hidden))) for _ in range(2))
    else:
        wx, wh = (rng.uniform(-1, 1, size=s).astype(np.float32) for s in (wx_shape, wh_shape))
        blob = _flagged(wx) + _flagged(bias) + _flagged(wh) + (b"" if whr is None else _flagged(whr))
    given, asked = _STATE_MODES[mode]
    state_sizes = [outch, hidden][:n_states]
    if int8:
        inputs = [_int8_activation(rng, (t, size))]
        inputs += [_int8_activation(rng, (nd, n)) for n in state_sizes] if given else []
    else:
        inputs = [rng.uniform(-1, 1, size=(t, size)).astype(np.float32)]
        inputs += [rng.uniform(-1, 1, size=(nd, n)).astype(np.float32) for n in state_sizes] if given else []
    return GridCase(params, blob, inputs, n_outputs=1 + n_states if asked else 1)


def _recurrent_grid(name: str, gates: int, bias_rows: int) -> list:
    cases = []
    for int8 in (False, True):
        for row, mode in _recurrent_rows():
            cases.append(_recurrent_case(name, len(cases), gates, bias_rows, row, mode, int8))
    # not in ncnn's tests: an empty sequence (T = 0), with and without states
    for mode in ("plain", "hidden"):
        case = _recurrent_case(name, len(cases), gates, bias_rows, (4, 1, 2, 2, 0), mode, False)
        inputs = [np.zeros((0, 4), np.float32)] + case.inputs[1:]
        cases.append(case._replace(inputs=inputs, edge=True))
    return cases


@grid("LSTM")
def lstm(name: str) -> list:
    return _recurrent_grid(name, 4, 4)


@grid("GRU")
def gru(name: str) -> list:
    return _recurrent_grid(name, 3, 4)


@grid("RNN")
def rnn(name: str) -> list:
    return _recurrent_grid(name, 1, 1)


def _per_channel(shape: tuple) -> int:
    """How many scales a per-channel table has: one for 1-D, h for 2-D, c for 3-D and 4-D (numpy's
    first axis but for 1-D)."""
    return 1 if len(shape) == 1 else shape[0]


def _channel_scale(table: np.ndarray, shape: tuple) -> np.ndarray:
    """The table broadcast to a blob of `shape`: one value, or one per first axis."""
    if table.size == 1:
        return table.reshape(())
    return table.reshape((-1,) + (1,) * (len(shape) - 1))


_QUANTIZE_MATS = [nc(5, 3, 2, 24), nc(3, 5, 3, 13),
                  nc(5, 7, 24), nc(7, 9, 12), nc(3, 5, 13), nc(3, 3, 256), nc(3, 3, 255),
                  nc(15, 24), nc(17, 12), nc(19, 15), nc(15, 256), nc(15, 255),
                  nc(128), nc(124), nc(127), nc(256), nc(255)]
_QUANTIZE_OOM = [(nc(5, 7, 24), (100.0, 100.0)), (nc(7, 9, 12), (100.0, 100.0)), (nc(3, 5, 13), (100.0, 100.0)),
                 (nc(15, 24), (100.0, 100.0)), (nc(17, 12), (100.0, 100.0)), (nc(19, 15), (100.0, 100.0)),
                 (nc(128), (120.0, 140.0)), (nc(124), (120.0, 140.0)), (nc(127), (120.0, 140.0))]


@grid("Quantize")
def quantize(name: str) -> list:
    rows = [(m, s) for m in _QUANTIZE_MATS for s in ((100.0, 100.0), (120.0, 140.0))] + _QUANTIZE_OOM
    cases = []
    for shape, (lo, hi) in rows:
        rng = case_rng(name, len(cases))
        n = 1 if lo == hi else _per_channel(shape)
        table = np.full(1, lo, np.float32) if lo == hi else rng.uniform(lo, hi, size=n).astype(np.float32)
        x = _away_from_half(rng, shape, -1.2, 1.2, _channel_scale(table, shape))
        cases.append(GridCase({0: n}, [table], [x]))
    return cases + [GridCase({0: 1}, [np.float32([100.0])], [_ZERO], edge=True)]


def _int_mat(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """ncnn's RandomIntMat: int32 accumulators in [-10000, 10000]."""
    return rng.integers(-10000, 10001, size=shape).astype(np.int32)


# (ncnn mat, scale_data_size, bias_data_size); the pack8 rows run in the default layout
_DEQUANT_ROWS = (
    [(nc(5, 3, 2, 24), 1, 24), (nc(5, 3, 2, 24), 1, 1), (nc(5, 3, 2, 24), 1, 0), (nc(5, 3, 2, 24), 24, 24),
     (nc(5, 3, 2, 24), 24, 1), (nc(5, 3, 2, 24), 24, 0), (nc(3, 5, 3, 13), 1, 13), (nc(3, 5, 3, 13), 13, 13),
     (nc(3, 5, 3, 13), 13, 0), (nc(5, 3, 2, 24), 1, 24), (nc(5, 3, 2, 24), 24, 24)]
    + [(nc(5, 7, 24), s, b) for s, b in ((1, 24), (1, 1), (1, 0), (24, 24), (24, 1), (24, 0))]
    + [(nc(15, 24), s, b) for s, b in ((1, 24), (1, 1), (1, 0), (24, 24), (24, 1), (24, 0))]
    + [(nc(128), 1, 1), (nc(128), 1, 0)]
    + [(nc(w, h, c), s, b) for w, h, c in ((11, 13, 48), (5, 7, 24), (7, 9, 12), (3, 5, 13))
       for s, b in ((1, c), (1, 1), (1, 0), (c, c), (c, 1), (c, 0))]
    + [(nc(w, h), s, b) for w, h in ((127, 48), (15, 24), (17, 12), (19, 15))
       for s, b in ((1, h), (1, 1), (1, 0), (h, h), (h, 1), (h, 0))]
    + [(nc(w), 1, b) for w in (128, 120, 124, 127) for b in (1, 0)])


@grid("Dequantize")
def dequantize(name: str) -> list:
    cases = []
    for shape, n_scale, n_bias in _DEQUANT_ROWS:
        rng = case_rng(name, len(cases))
        weights = [rng.uniform(-1.2, 1.2, size=n).astype(np.float32) for n in (n_scale, n_bias) if n]
        cases.append(GridCase({0: n_scale, 1: n_bias}, weights, [_int_mat(rng, shape)]))
    return cases + [GridCase({0: 1, 1: 1}, [np.float32([0.5]), np.float32([0.25])], [np.zeros(_ZERO, np.int32)],
                             edge=True)]


def _requant_tables(shape: tuple, c: int) -> list:
    """The (scale_in, scale_out, bias) sizes ncnn's requantize tests sweep for a blob of c channels."""
    return [(si, so, b) for si, so in ((1, 1), (c, c), (1, c), (c, 1)) for b in (c, 1, 0)]


_REQUANT_MATS = [nc(7, 9, 12), nc(3, 5, 13), nc(17, 12), nc(19, 15), nc(5, 7, 24), nc(15, 24)]
_REQUANT_4D = [(nc(5, 3, 2, 12), 1, 1, 12), (nc(5, 3, 2, 12), 12, 12, 0), (nc(3, 5, 3, 13), 1, 13, 13),
               (nc(3, 5, 3, 13), 13, 1, 0), (nc(5, 3, 2, 24), 1, 1, 24), (nc(5, 3, 2, 24), 24, 24, 0)]
_REQUANT_1D = [(nc(124), 1, 1, 1), (nc(124), 1, 1, 0), (nc(127), 1, 1, 1), (nc(127), 1, 1, 0),
               (nc(128), 1, 1, 1), (nc(128), 1, 1, 0)]
_REQUANT_OOM = [(nc(7, 9, 12), 12, 12, 12), (nc(3, 5, 13), 13, 13, 13), (nc(17, 12), 12, 12, 12),
                (nc(19, 15), 15, 15, 15), (nc(124), 1, 1, 1), (nc(5, 7, 24), 24, 24, 24), (nc(15, 24), 24, 24, 24),
                (nc(128), 1, 1, 1)]


# activation_type and the ranges its two params are drawn from (a fixed value: lo == hi)
_REQUANT_ACTS = [(0, (0, 0), (0, 0)), (1, (0, 0), (0, 0)), (2, (0, 1), (0, 0)), (3, (-1, 0), (0, 1)),
                 (4, (0, 0), (0, 0)), (5, (0, 0), (0, 0))]


def _requant_rows() -> list:
    """(shape, scale_in size, scale_out size, bias size, (activation_type, alpha range, beta range))."""
    tables = [(m, *t) for m in _REQUANT_MATS for t in _requant_tables(m, m[0])]
    rows = [(m, si, so, b, act) for m, si, so, b in _REQUANT_4D + tables + _REQUANT_1D + _REQUANT_OOM
            for act in _REQUANT_ACTS]
    # leaky relu with slope 0, a negative slope and a slope above 1
    return rows + [(nc(127), 1, 1, 0, (2, lo_hi, (0, 0))) for lo_hi in ((0, 0), (-1, 0), (1, 2))]


def _ncnn_pack4_table_bug(shape: tuple, n_in: int, n_out: int, n_bias: int) -> bool:
    """Whether the pinned x86 ncnn answers wrongly: its pack4 Requantize (a 2-D h or a 3-D/4-D c
    that is a multiple of 4 but not of 8) misapplies per-channel tables. With
    use_packing_layout off the same ncnn agrees with vkncnn exactly on these cases, and the
    same tables on 13, 15 and 24 channels (pack1, pack8) agree with ncnn as they are."""
    return len(shape) > 1 and shape[0] % 4 == 0 and shape[0] % 8 != 0 and max(n_in, n_out, n_bias) > 1


# int8 outputs lie in [-127, 127] and rel_err divides by at least 1: any answer of the right
# shape passes (what these cases still check is that vkncnn answers, in ncnn's shape)
_ANY_INT8 = 255.0


@grid("Requantize")
def requantize(name: str) -> list:
    cases = []
    for shape, n_in, n_out, n_bias, (act, alpha, beta) in _requant_rows():
        rng = case_rng(name, len(cases))
        weights = [rng.uniform(0.0001, 0.001, size=n_in).astype(np.float32),
                   rng.uniform(10, 100, size=n_out).astype(np.float32)]
        weights += [rng.uniform(-1.2, 1.2, size=n_bias).astype(np.float32)] if n_bias else []
        params = {0: n_in, 1: n_out, 2: n_bias, 3: act, 4: [float(rng.uniform(*alpha)), float(rng.uniform(*beta))]}
        tol = _ANY_INT8 if _ncnn_pack4_table_bug(shape, n_in, n_out, n_bias) else 1e-4
        cases.append(GridCase(params, weights, [_int_mat(rng, shape)], tol=tol))
    # relu without its activation params
    cases.append(GridCase({0: 1, 1: 1, 2: 0, 3: 1}, [np.float32([0.0005]), np.float32([50.0])],
                          [_int_mat(case_rng(name, len(cases)), nc(127))]))
    cases.append(GridCase({0: 1, 1: 1, 2: 0}, [np.float32([0.0005]), np.float32([50.0])],
                          [np.zeros(_ZERO, np.int32)], edge=True))
    return cases


@grid("Packing")
def packing(name: str) -> list:
    """A net's blobs come back in their plain layout, so each out_elempack must leave the values as
    they were; ncnn's input elempacks are not reachable from outside and are not swept."""
    mats = [nc(9, 7, 10, 16), nc(9, 7, 10, 3), nc(9, 10, 16), nc(9, 10, 3), nc(19, 16), nc(80)]
    cases = [GridCase({0: pack}, [], [m]) for m in mats for pack in (1, 4, 8, 16)]
    # the Vulkan test's fp32 -> fp32 cast types
    cases += [GridCase({0: pack, 2: 1, 3: 1}, [], [m]) for m in mats for pack in (1, 4)]
    return cases + [GridCase({0: 4}, [], [_ZERO], edge=True)]


@grid("StatisticsPooling")
def statisticspooling(name: str) -> list:
    cases = [GridCase({0: stddev}, [], [m]) for m in (nc(5, 4, 3, 3), nc(3, 3, 2, 8)) for stddev in (0, 1)]
    # the pinned ncnn crashes on an empty blob (a crash is no answer): vkncnn must still not fail
    # with anything but a vkncnn.Error
    return cases + [GridCase({0: 1}, [], [_ZERO], edge=True)]
