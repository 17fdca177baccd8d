"""RNN: h_t = tanh(W_xc x_t + W_hc h_{t-1} + b), over a (T, size) sequence.

Params, weights and blobs as every recurrent layer (vkncnn/layers/common/recurrent.py); one
gate, one bias row.
"""

from vkncnn.cpu_fallback import recurrent
from vkncnn.layer import register_layer
from vkncnn.layers.common.recurrent import RecurrentLayer


@register_layer("RNN")
class RNN(RecurrentLayer):
    gates = 1
    bias_rows = 1

    def run_direction(self, d, xproj, states, reverse):
        return recurrent.rnn(xproj + self.bias_c[d, 0], self.recur(d), states[0], reverse)
