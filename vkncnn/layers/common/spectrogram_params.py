"""The STFT params Spectrogram and InverseSpectrogram share, checked the same way.

0 n_fft 0, 2 hoplen n_fft/4, 3 winlen n_fft, 4 window_type 0 (0 ones, 1 Hann,
2 Hamming), 5 center 1, 7 normalized 0 (0 none, 1 by sqrt(n_fft), 2 by the window's
L2 norm).
"""

from vkncnn.cpu_fallback import spectral
from vkncnn.errors import ParamError

MAX_FFT = 1 << 20


def load_stft_params(layer, pd) -> None:
    layer.n_fft = pd.get(0, 0)
    layer.hoplen = pd.get(2, layer.n_fft // 4)
    layer.winlen = pd.get(3, layer.n_fft)
    layer.window_type = pd.get(4, 0)
    layer.center = pd.get(5, 1)
    layer.normalized = pd.get(7, 0)
    where = f"{layer.type} {layer.name!r}"
    if not 1 <= layer.n_fft <= MAX_FFT:
        raise ParamError(f"{where}: n_fft (param 0) must be 1..{MAX_FFT}, got {layer.n_fft}")
    if layer.hoplen < 1:
        raise ParamError(f"{where}: hoplen (param 2) must be >= 1, got {layer.hoplen}")
    if not 1 <= layer.winlen <= layer.n_fft:
        raise ParamError(f"{where}: winlen (param 3) must be 1..n_fft ({layer.n_fft}), got {layer.winlen}")
    if layer.window_type not in (0, 1, 2):
        raise ParamError(f"{where}: window_type (param 4) must be 0 ones, 1 hann or 2 hamming, "
                         f"got {layer.window_type}")
    if layer.normalized not in (0, 1, 2):
        raise ParamError(f"{where}: normalized (param 7) must be 0, 1 or 2, got {layer.normalized}")
    layer.window = spectral.window(layer.n_fft, layer.winlen, layer.window_type)
