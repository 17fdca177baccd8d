"""Fuzz cases for the short-time Fourier transforms: Spectrogram, InverseSpectrogram.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from .case import Case
from .draw import chance, extent, pick, tensor


def _stft(rng):
    n_fft = pick(rng, (4, 8, 9, 16, 20))
    p = {0: n_fft, 2: extent(rng, 1, n_fft), 3: extent(rng, max(1, n_fft // 2), n_fft),
         4: int(rng.integers(0, 3)), 7: int(rng.integers(0, 3))}
    return n_fft, p


def spectrogram(rng):
    n_fft, p = _stft(rng)
    p.update({1: int(rng.integers(0, 3)), 5: int(rng.integers(0, 2)), 6: int(rng.integers(0, 3)),
              8: int(rng.integers(0, 2))})
    n = extent(rng, n_fft if not p[5] else max(n_fft // 2 + 1, 2), 80)
    return Case("Spectrogram", p, [tensor(rng, (n,))], tol=5e-4, tol16=2e-2)


def inversespectrogram(rng):
    n_fft, p = _stft(rng)
    onesided = chance(rng, 0.5)
    p.update({1: int(rng.integers(0, 3)), 5: int(rng.integers(0, 2))})
    if p[4] == 0 and p[3] < n_fft and p[5]:
        p[3] = n_fft  # a zero-padded window with center: ncnn divides by its zero overlap
    freqs = n_fft // 2 + 1 if onesided else n_fft
    frames = extent(rng, 2, 9)
    return Case("InverseSpectrogram", p, [tensor(rng, (freqs, frames, 2))], tol=1e-3, tol16=3e-2)
