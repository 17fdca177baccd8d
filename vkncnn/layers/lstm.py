"""LSTM: gates I, F, O, G (ncnn's order), over a (T, size) sequence.

    c = sigmoid(F) * c + sigmoid(I) * tanh(G)      h = sigmoid(O) * tanh(c)

Param 3 hidden_size (default num_output): when it differs, h is projected to
num_output by weight_hr [num_output][hidden_size] (loaded after W_hc), as PyTorch's
proj_size. Inputs x[, h0, c0], outputs y[, h, c]: h has num_output values per direction,
c hidden_size. Otherwise as every recurrent layer (vkncnn/layers/common/recurrent.py).
"""

from vkncnn.cpu_fallback import recurrent
from vkncnn.layer import register_layer
from vkncnn.layers.common.recurrent import RecurrentLayer


@register_layer("LSTM")
class LSTM(RecurrentLayer):
    gates = 4
    bias_rows = 4
    n_states = 2

    def _hidden_size(self, pd) -> int:
        return pd.get(3, self.num_output)

    def state_sizes(self) -> list[int]:
        return [self.num_output, self.hidden_size]

    def run_direction(self, d, xproj, states, reverse):
        whr = None if self.weight_hr is None else self.weight_hr[d]
        return recurrent.lstm(xproj + self.bias_c[d].reshape(-1), self.recur(d), states[0], states[1],
                              reverse, whr)
