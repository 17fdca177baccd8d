"""InverseSpectrogram: inverse STFT by overlap-add (torch.istft / librosa's istft).

Params: the STFT ones (see spectrogram_params.py) plus 1 returns 0 (0 complex as
(n, 2) real/imag pairs, 1 real part, 2 imaginary part, both (n,)). Input
(freqs, frames, 2): freqs n_fft/2 + 1 (one-sided) or n_fft. The output is divided by
the summed squared window; samples only zero window
taps cover come out 0, as in ncnn.
"""

import numpy as np

from vkncnn.cpu_fallback import spectral
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.spectrogram_params import load_stft_params
from vkncnn.memory_budget import check_alloc


@register_layer("InverseSpectrogram")
class InverseSpectrogram(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        load_stft_params(self, pd)
        self.returns = pd.get(1, 0)
        if self.returns not in (0, 1, 2):
            raise ParamError(f"InverseSpectrogram {self.name!r}: returns (param 1) must be 0 complex, 1 real or "
                             f"2 imag, got {self.returns}")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = np.asarray(bottoms[0], np.float32)
        freqs_ok = (self.n_fft // 2 + 1, self.n_fft)
        if x.ndim != 3 or x.shape[2] != 2 or x.shape[0] not in freqs_ok:
            raise ShapeError(f"InverseSpectrogram {self.name!r} takes (freqs, frames, 2) with freqs "
                             f"{freqs_ok[0]} or {freqs_ok[1]} (n_fft={self.n_fft}), got {x.shape}")
        # complex128 frames of n_fft, overlap-added hoplen apart: both sizes are params
        frames = x.shape[1]
        if frames == 0:
            raise ShapeError(f"InverseSpectrogram {self.name!r}: input {x.shape} has no frame to transform")
        check_alloc(opt, (frames, self.n_fft), 16, "the inverse-transformed frames")
        check_alloc(opt, ((frames - 1) * self.hoplen + self.n_fft,), 16, "the overlap-added signal")
        return [spectral.inverse_spectrogram(x, self.n_fft, self.hoplen, self.window, bool(self.center),
                                             self.normalized, self.returns)]
