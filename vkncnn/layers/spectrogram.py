"""Spectrogram: short-time Fourier transform of a 1-D signal (torchaudio's spectrogram).

Params: the STFT ones (see spectrogram_params.py) plus 1 power 0 (0 complex as
(freqs, frames, 2) real/imag pairs, 1 magnitude, 2 power, both (freqs, frames)),
6 pad_type 2 (with center: 0 zeros, 1 replicate, 2 reflect, n_fft/2 each side),
8 onesided 1 (n_fft/2 + 1 frequencies, else n_fft).
"""

import numpy as np

from vkncnn.cpu_fallback import spectral
from vkncnn.errors import ParamError, ShapeError
from vkncnn.layer import Layer, register_layer
from vkncnn.layers.common.spectrogram_params import load_stft_params
from vkncnn.memory_budget import check_alloc

PAD_MODES = {0: "constant", 1: "edge", 2: "reflect"}


@register_layer("Spectrogram")
class Spectrogram(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False

    def load_param(self, pd) -> int:
        load_stft_params(self, pd)
        self.power = pd.get(1, 0)
        self.pad_type = pd.get(6, 2)
        self.onesided = pd.get(8, 1)
        if self.power not in (0, 1, 2):
            raise ParamError(f"Spectrogram {self.name!r}: power (param 1) must be 0, 1 or 2, got {self.power}")
        if self.center and self.pad_type not in PAD_MODES:
            raise ParamError(f"Spectrogram {self.name!r}: pad_type (param 6) must be 0 zeros, 1 replicate or "
                             f"2 reflect, got {self.pad_type}")
        return 0

    def forward_cpu(self, bottoms, opt):
        x = np.asarray(bottoms[0], np.float32)
        if x.ndim != 1:
            raise ShapeError(f"Spectrogram {self.name!r} takes a 1-D signal, got shape {x.shape}")
        if x.size == 0:
            raise ShapeError(f"Spectrogram {self.name!r}: the signal is empty")
        if self.center:
            pad = self.n_fft // 2
            if self.pad_type == 2 and pad >= x.size:
                raise ShapeError(f"Spectrogram {self.name!r}: reflect padding by {pad} needs more than {pad} "
                                 f"samples, got {x.size}")
            x = np.pad(x, pad, mode=PAD_MODES[self.pad_type])
        if x.size < self.n_fft:
            raise ShapeError(f"Spectrogram {self.name!r}: {x.size} samples (after padding) make no frame of "
                             f"n_fft={self.n_fft}")
        # every frame is gathered whole: n_fft and hoplen (params) decide (frames, n_fft), in
        # float64 and then complex128 (16 bytes) for the transform
        frames = (x.size - self.n_fft) // self.hoplen + 1
        check_alloc(opt, (frames, self.n_fft), 16, "the framed signal")
        return [spectral.spectrogram(x, self.n_fft, self.hoplen, self.window, self.power, self.normalized,
                                     bool(self.onesided))]
