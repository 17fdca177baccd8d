"""Recurrent kernels (RNN, GRU, LSTM) on numpy, with ncnn's gate orders and int8 scheme.

Per direction the work splits in two: the input projection W_xc x_t + b of every time
step is one matrix product up front; only the recurrent part W_hc h_{t-1} has to run
step by step (a Python loop over time, never over elements).

Gate orders (rows of W_xc / W_hc, `hidden` rows per gate):
  RNN   h = tanh(x W + h W + b)
  GRU   R, U, N      bias rows: R (x+h), U (x+h), N of x (WN), N of h (BN)
  LSTM  I, F, O, G   bias rows: one per gate; optional projection W_hr (num_output x hidden)

int8 (int8_scale_term): weights are int8 with one scale per row; each time step's input
row and the hidden state are quantized on the fly (scale 127 / absmax), the products
are summed exactly as integers and scaled back, as ncnn's reference kernels do.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .activation import sigmoid
from .conv import float2int8

F32 = np.float32


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x).astype(F32, copy=False)


class Int8Weight:
    """An int8 weight matrix (rows, cols) with one dequantization factor per row."""

    def __init__(self, q: np.ndarray, scales: np.ndarray) -> None:
        self.q64 = np.asarray(q, np.float64)  # float64 holds every int8 dot product exactly
        scales = np.asarray(scales, F32)
        with np.errstate(divide="ignore"):
            self.descale = np.where(scales == 0, F32(0), F32(1) / scales).astype(F32)

    def apply_rows(self, xq: np.ndarray, x_descale: np.ndarray) -> np.ndarray:
        """(T, cols) int8 rows with one descale each -> (T, rows) float32."""
        acc = (np.asarray(xq, np.float64) @ self.q64.T).astype(F32)
        return acc * (x_descale[:, None].astype(F32) * self.descale[None, :])


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: int8 values at scale 127/absmax, and the descale (0 for an all-zero row)."""
    absmax = np.max(np.abs(x), axis=-1) if x.shape[-1] else np.zeros(x.shape[:-1], F32)
    zero = absmax == 0
    with np.errstate(divide="ignore"):
        scale = np.where(zero, F32(1), F32(127) / np.where(zero, F32(1), absmax)).astype(F32)
    q = float2int8(x * scale[..., None])
    descale = np.where(zero, F32(0), F32(1) / scale).astype(F32)
    return q, descale


def dense_recur(wh: np.ndarray, bias: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """h -> W_hc h (+ bias) in fp32."""
    wh = np.ascontiguousarray(wh, F32)
    if bias is None:
        return lambda h: wh @ h
    return lambda h: wh @ h + bias


def int8_recur(wh: Int8Weight, bias: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """h -> W_hc h (+ bias) with h quantized on the fly, as ncnn's int8 kernels do."""
    def recur(h: np.ndarray) -> np.ndarray:
        hq, descale = quantize_rows(h[None, :])
        out = wh.apply_rows(hq, descale)[0]
        return out if bias is None else out + bias
    return recur


def input_projection(x: np.ndarray, wx, int8: bool) -> np.ndarray:
    """(T, size) -> (T, gates*hidden): W_xc x_t for every step at once."""
    if int8:
        xq, descale = quantize_rows(x)
        return wx.apply_rows(xq, descale)
    return x @ np.asarray(wx, F32).T


def _steps(T: int, reverse: bool):
    return range(T - 1, -1, -1) if reverse else range(T)


def rnn(xproj: np.ndarray, recur, h: np.ndarray, reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """xproj (T, H) already holds W_xc x_t + b. Returns (outputs (T, H), last hidden)."""
    out = np.empty_like(xproj)
    for t in _steps(xproj.shape[0], reverse):
        h = _tanh(xproj[t] + recur(h))
        out[t] = h
    return out, h


def gru(xproj: np.ndarray, recur, h: np.ndarray, reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """xproj (T, 3H) holds W_x x_t plus the R/U biases and WN; recur(h) gives W_h h
    with BN added to its N rows (ncnn applies the reset gate to that part only)."""
    H = h.shape[0]
    out = np.empty((xproj.shape[0], H), F32)
    for t in _steps(xproj.shape[0], reverse):
        hp = recur(h)
        r = sigmoid(xproj[t, :H] + hp[:H])
        u = sigmoid(xproj[t, H:2 * H] + hp[H:2 * H])
        n = _tanh(xproj[t, 2 * H:] + r * hp[2 * H:])
        h = ((F32(1) - u) * n + u * h).astype(F32)
        out[t] = h
    return out, h


def lstm(xproj: np.ndarray, recur, h: np.ndarray, c: np.ndarray, reverse: bool,
         whr: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """xproj (T, 4*hidden) holds W_x x_t + b (gates I F O G). With a projection whr
    (num_output, hidden) the state fed back and output is whr @ (o * tanh(c))."""
    hidden = c.shape[0]
    out = np.empty((xproj.shape[0], h.shape[0]), F32)
    for t in _steps(xproj.shape[0], reverse):
        g = xproj[t] + recur(h)
        i = sigmoid(g[:hidden])
        f = sigmoid(g[hidden:2 * hidden])
        o = sigmoid(g[2 * hidden:3 * hidden])
        cand = _tanh(g[3 * hidden:])
        c = (f * c + i * cand).astype(F32)
        h = o * _tanh(c)
        if whr is not None:
            h = whr @ h
        out[t] = h
    return out, h, c
