"""RecurrentLayer: what RNN, GRU and LSTM share: params, weight loading, blob handling.

Params: 0 num_output, 1 weight_data_size, 2 direction (0 forward, 1 reverse,
2 bidirectional: outputs of both concatenated along w), 8 int8_scale_term.
Weights per direction, in ncnn's order: W_xc [gates*hidden][size], bias_c
[bias_rows][hidden], W_hc [gates*hidden][num_output] (+ LSTM's projection), then with
int8 one scale per row of W_xc and of W_hc (raw fp32).

Input (T, size): 1-D is one step; 3-D/4-D with leading extents of 1 are the same
memory. Optional extra inputs are the initial states (num_directions rows); the
matching extra outputs are the final states, in the shape the initial ones came in
((num_directions, n) when zero-initialised). Recurrent layers run on numpy; inside a
GPU net the runtime downloads their input and uploads their output.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import recurrent
from vkncnn.cpu_fallback.conv import quantize

from ...errors import ParamError, ShapeError, WeightError
from ...layer import Layer


class RecurrentLayer(Layer):
    gates = 1        # weight row blocks per direction
    bias_rows = 1
    n_states = 1     # hidden (RNN, GRU) or hidden + cell (LSTM)

    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False

    # -- params ------------------------------------------------------------------------------
    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        self.weight_data_size = pd.get(1, 0)
        self.direction = pd.get(2, 0)
        self.int8_scale_term = pd.get(8, 0)
        self.hidden_size = self._hidden_size(pd)
        if self.num_output <= 0:
            raise ParamError(f"{self.type} num_output (0) must be positive, got {self.num_output}")
        if self.hidden_size <= 0:
            raise ParamError(f"{self.type} hidden_size (3) must be positive, got {self.hidden_size}")
        if self.direction not in (0, 1, 2):
            raise ParamError(f"{self.type} direction (2) must be 0 forward, 1 reverse or 2 bidirectional, "
                             f"got {self.direction}")
        self.num_directions = 2 if self.direction == 2 else 1
        block = self.num_directions * self.gates * self.hidden_size
        if self.weight_data_size <= 0 or self.weight_data_size % block:
            raise ParamError(f"{self.type} weight_data_size (1) {self.weight_data_size} is not a positive "
                             f"multiple of num_directions*{self.gates}*hidden = {block}")
        self.input_size = self.weight_data_size // block
        self.support_int8_storage = bool(self.int8_scale_term)
        return 0

    def _hidden_size(self, pd) -> int:
        return self.num_output

    # -- weights -----------------------------------------------------------------------------
    def load_model(self, mb) -> int:
        nd, rows, hid = self.num_directions, self.gates * self.hidden_size, self.hidden_size
        wx = mb.load(self.input_size, rows, nd, 0)
        self.bias_c = np.asarray(mb.load(hid, self.bias_rows, nd, 0), np.float32)
        wh = mb.load(self.num_output, rows, nd, 0)
        self.weight_hr = None
        if self.num_output != hid:
            whr = mb.load(hid, self.num_output, nd, 0)
            if whr.dtype == np.int8:
                raise WeightError(f"{self.type} projection weights (weight_hr) must be fp32 or fp16, got int8")
            self.weight_hr = np.asarray(whr, np.float32)
        if not self.int8_scale_term:
            if wx.dtype == np.int8 or wh.dtype == np.int8:
                raise WeightError(f"{self.type} has int8 weights but int8_scale_term (8) is 0: "
                                  "no scales to dequantize them")
            self.weight_xc = np.ascontiguousarray(wx, np.float32)
            self.weight_hc = np.ascontiguousarray(wh, np.float32)
            return 0
        sx = np.asarray(mb.load(rows, nd, 1), np.float32)
        sh = np.asarray(mb.load(rows, nd, 1), np.float32)
        # fp32 weights with scales (e.g. from randweights) are quantized here, once
        qx = wx if wx.dtype == np.int8 else quantize(wx, sx[:, :, None])
        qh = wh if wh.dtype == np.int8 else quantize(wh, sh[:, :, None])
        self.weight_xc = [recurrent.Int8Weight(qx[d], sx[d]) for d in range(nd)]
        self.weight_hc = [recurrent.Int8Weight(qh[d], sh[d]) for d in range(nd)]
        return 0

    # -- forward -----------------------------------------------------------------------------
    def state_sizes(self) -> list[int]:
        return [self.num_output]

    def forward_cpu(self, bottoms, opt):
        n_in, n_out = len(bottoms), len(self.tops) if self.tops else 1
        if n_in not in (1, 1 + self.n_states):
            raise ShapeError(f"{self.type} {self.name!r} takes 1 input or {1 + self.n_states} (input and "
                             f"initial states), got {n_in}")
        if n_out not in (1, 1 + self.n_states):
            raise ShapeError(f"{self.type} {self.name!r} gives 1 output or {1 + self.n_states} (output and "
                             f"final states), got {n_out}")
        x = self._sequence(bottoms[0])
        states, shapes = self._initial_states(bottoms[1:])
        outs = []
        for d in range(self.num_directions):
            reverse = self.direction == 1 or d == 1
            xproj = recurrent.input_projection(x, self.weight_xc[d], bool(self.int8_scale_term))
            out, *final = self.run_direction(d, xproj, [s[d] for s in states], reverse)
            outs.append(out)
            for s, f in zip(states, final):
                s[d] = f
        top = outs[0] if len(outs) == 1 else np.concatenate(outs, axis=1)
        if n_out == 1:
            return [top]
        return [top] + [s.reshape(shape) for s, shape in zip(states, shapes)]

    def run_direction(self, d: int, xproj, states, reverse):  # pragma: no cover - per subclass
        """(output, *final states) of direction d over the projected inputs: RNN, LSTM and
        GRU each define it; this base class is never registered as a layer."""
        raise NotImplementedError(f"{type(self).__name__} must define run_direction")

    def recur(self, d: int, bias=None):
        if self.int8_scale_term:
            return recurrent.int8_recur(self.weight_hc[d], bias)
        return recurrent.dense_recur(self.weight_hc[d], bias)

    def _sequence(self, x: np.ndarray) -> np.ndarray:
        if x.ndim == 1:
            x = x[None, :]
        elif x.ndim > 2:
            if any(e != 1 for e in x.shape[:-2]):
                raise ShapeError(f"{self.type} {self.name!r} takes a (T, {self.input_size}) sequence; a "
                                 f"{x.ndim}-D input {x.shape} must have leading extents of 1")
            x = x.reshape(x.shape[-2:])
        if x.shape[1] != self.input_size:
            raise ShapeError(f"{self.type} {self.name!r}: input rows have {x.shape[1]} values, the weights "
                             f"expect {self.input_size} (input shape {x.shape})")
        return np.ascontiguousarray(x, np.float32)

    def _initial_states(self, given) -> tuple[list[np.ndarray], list[tuple]]:
        nd = self.num_directions
        names = ["hidden", "cell"]
        states, shapes = [], []
        for k, n in enumerate(self.state_sizes()):
            if given:
                s = np.asarray(given[k], np.float32)
                if s.size != nd * n:
                    raise ShapeError(f"{self.type} {self.name!r}: initial {names[k]} state {s.shape} has "
                                     f"{s.size} values, expected num_directions*{n} = {nd * n}")
                if nd == 2 and (s.ndim < 2 or s.shape[-1] != n):
                    raise ShapeError(f"{self.type} {self.name!r}: a bidirectional initial {names[k]} state "
                                     f"must be ({nd}, {n}) rows, got {s.shape}")
                states.append(s.reshape(nd, n).copy())
                shapes.append(s.shape)
            else:
                states.append(np.zeros((nd, n), np.float32))
                shapes.append((nd, n))
        return states, shapes
