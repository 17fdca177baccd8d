"""GRU: reset R, update U, new N gates (ncnn / PyTorch order), over a (T, size) sequence.

    r = sigmoid(W_xr x + W_hr h + b_r)      u = sigmoid(W_xu x + W_hu h + b_u)
    n = tanh(W_xn x + b_wn + r * (W_hn h + b_bn))
    h = (1 - u) * n + u * h

Bias rows: R, U, WN, BN. Params, weights and blobs as every recurrent layer
(vkncnn/layers/common/recurrent.py).
"""

import numpy as np

from vkncnn.cpu_fallback import recurrent
from vkncnn.layer import register_layer
from vkncnn.layers.common.recurrent import RecurrentLayer


@register_layer("GRU")
class GRU(RecurrentLayer):
    gates = 3
    bias_rows = 4

    def run_direction(self, d, xproj, states, reverse):
        b = self.bias_c[d]
        zeros = np.zeros_like(b[0])
        x_bias = np.concatenate([b[0], b[1], b[2]])   # R and U take both biases here, N its WN
        h_bias = np.concatenate([zeros, zeros, b[3]])  # BN sits inside the reset gate
        return recurrent.gru(xproj + x_bias, self.recur(d, h_bias), states[0], reverse)
