"""Spectrogram and InverseSpectrogram against real ncnn, over a sampled grid of
window / padding / normalisation / sidedness / output modes."""

import itertools

import pytest

from tests.layers.typed_oracle import needs_gpu
from tests.oracle import check_layer, rand
from vkncnn.errors import ParamError, ShapeError
from vkncnn.testing import run_layer

FFTS = [(8, 2, 8), (9, 3, 9), (16, 4, 12)]
SPEC = [p for i, p in enumerate(itertools.product(FFTS, [0, 1, 2], [0, 1, 2], [(1, 0), (1, 1), (1, 2), (0, 2)],
                                                  [0, 1, 2], [0, 1])) if i % 5 == 0]


@pytest.mark.parametrize("fft,window_type,power,pad,normalized,onesided", SPEC)
def test_spectrogram_matches_ncnn(fft, window_type, power, pad, normalized, onesided):
    n_fft, hop, winlen = fft
    params = {0: n_fft, 1: power, 2: hop, 3: winlen, 4: window_type, 5: pad[0], 6: pad[1], 7: normalized,
              8: onesided}
    check_layer("Spectrogram", params, [], [rand(61, seed=n_fft)])


INV = [p for i, p in enumerate(itertools.product(FFTS, [0, 1, 2], [0, 1, 2], [0, 1], [0, 1, 2], [0, 1]))
       if i % 4 == 0]


@pytest.mark.parametrize("fft,window_type,returns,center,normalized,onesided", INV)
def test_inversespectrogram_matches_ncnn(fft, window_type, returns, center, normalized, onesided):
    n_fft, hop, winlen = fft
    freqs = n_fft // 2 + 1 if onesided else n_fft
    params = {0: n_fft, 1: returns, 2: hop, 3: winlen, 4: window_type, 5: center, 7: normalized}
    check_layer("InverseSpectrogram", params, [], [rand(freqs, 7, 2, seed=n_fft)], tol=1e-3)


@pytest.mark.parametrize("type_name,params", [
    ("Spectrogram", {}), ("Spectrogram", {0: 8, 3: 9}), ("Spectrogram", {0: 8, 4: 3}),
    ("Spectrogram", {0: 8, 1: 3}), ("Spectrogram", {0: 8, 2: 0}), ("InverseSpectrogram", {0: 8, 1: 5}),
    ("InverseSpectrogram", {0: 8, 7: 4})])
def test_stft_bad_params(type_name, params):
    with pytest.raises(ParamError, match=type_name):
        run_layer(type_name, params, [], [rand(5, 3, 2)])


@pytest.mark.parametrize("type_name,shape", [("Spectrogram", (4, 40)), ("Spectrogram", (3,)),
                                             ("InverseSpectrogram", (6, 3, 2)), ("InverseSpectrogram", (5, 3))])
def test_stft_bad_shapes(type_name, shape):
    with pytest.raises(ShapeError, match=type_name):
        run_layer(type_name, {0: 8}, [], [rand(*shape)])


@needs_gpu
def test_spectrograms_inside_gpu_net_match_ncnn():
    check_layer("Spectrogram", {0: 16, 1: 2, 4: 1}, [], [rand(61)], gpu=True)
    check_layer("InverseSpectrogram", {0: 16, 4: 1}, [], [rand(9, 7, 2)], gpu=True, tol=1e-3)
