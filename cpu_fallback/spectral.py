"""Short-time Fourier transforms as ncnn's Spectrogram / InverseSpectrogram compute them."""

from __future__ import annotations

import numpy as np

F32 = np.float32


def window(n_fft: int, winlen: int, window_type: int) -> np.ndarray:
    """A periodic window of winlen taps centred in n_fft (0 ones, 1 Hann, 2 Hamming), float32."""
    i = np.arange(winlen, dtype=np.float64)
    if window_type == 1:
        taps = 0.5 * (1 - np.cos(2 * np.pi * i / winlen))
    elif window_type == 2:
        taps = 0.54 - 0.46 * np.cos(2 * np.pi * i / winlen)
    else:
        taps = np.ones(winlen)
    left = (n_fft - winlen) // 2
    out = np.zeros(n_fft, F32)
    out[left:left + winlen] = taps.astype(F32)
    return out


def spectrogram(x: np.ndarray, n_fft: int, hoplen: int, win: np.ndarray, power: int, normalized: int,
                onesided: bool) -> np.ndarray:
    """x (n,) already padded -> (freqs, frames, 2) complex as real pairs, or (freqs, frames)
    magnitude (power 1) / power (power 2)."""
    frames = (x.size - n_fft) // hoplen + 1
    idx = np.arange(frames)[:, None] * hoplen + np.arange(n_fft)[None, :]
    segments = x.astype(np.float64)[idx] * win.astype(np.float64)
    spec = (np.fft.rfft(segments, axis=1) if onesided else np.fft.fft(segments, axis=1)).T  # (freqs, frames)
    if normalized == 1:
        spec = spec * F32(1 / np.sqrt(n_fft))
    elif normalized == 2:
        spec = spec * F32(1 / np.sqrt(np.sum(win.astype(F32) ** 2, dtype=F32)))
    if power == 0:
        return np.stack([spec.real, spec.imag], axis=-1).astype(F32)
    if power == 1:
        return np.abs(spec).astype(F32)
    return (spec.real ** 2 + spec.imag ** 2).astype(F32)


def inverse_spectrogram(spec: np.ndarray, n_fft: int, hoplen: int, win: np.ndarray, center: bool,
                        normalized: int, returns: int) -> np.ndarray:
    """spec (freqs, frames, 2) -> overlap-added inverse DFT divided by the summed squared
    window: (outsize, 2) complex, (outsize,) real part (returns 1) or imaginary (2)."""
    freqs, frames = spec.shape[:2]
    z = spec[..., 0].astype(np.float64) + 1j * spec[..., 1].astype(np.float64)  # (freqs, frames)
    if freqs != n_fft:  # one-sided: the rest is the conjugate mirror
        mirror = np.conj(z[1:n_fft - n_fft // 2][::-1])
        z = np.concatenate([z, mirror], axis=0)
    if normalized == 1:
        z = z * np.sqrt(n_fft)
    elif normalized == 2:
        z = z * np.sqrt(np.sum(win.astype(F32) ** 2, dtype=F32))
    frames_time = np.fft.ifft(z, axis=0).T * win.astype(np.float64)  # (frames, n_fft)
    outsize = (frames - 1) * hoplen + (n_fft % 2 if center else n_fft)
    pos = np.arange(frames)[:, None] * hoplen + np.arange(n_fft)[None, :] - (n_fft // 2 if center else 0)
    keep = (pos >= 0) & (pos < outsize)
    acc = np.zeros(outsize, np.complex128)
    norm = np.zeros(outsize, np.float64)
    np.add.at(acc, pos[keep], frames_time[keep])
    np.add.at(norm, pos[keep], np.broadcast_to(win.astype(np.float64) ** 2, pos.shape)[keep])
    # a sample only zero window taps cover has 0 / 0; ncnn's build returns 0 there (measured)
    safe = np.where(norm > 0, norm, 1.0)
    re = np.where(norm > 0, acc.real / safe, 0.0)
    im = np.where(norm > 0, acc.imag / safe, 0.0)
    if returns == 0:
        return np.stack([re, im], axis=-1).astype(F32)
    return (re if returns == 1 else im).astype(F32)
