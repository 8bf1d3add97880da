"""WORLD's codecs against pyworld to 1e-9 on real speech at 8 to 48 kHz; below 12 kHz, where pyworld's
code_aperiodicity raises IndexError, koe codes to frames of no values and decodes as WORLD does."""

import numpy as np
import pytest
import pyworld

import koe.world as kw
from test_world import INPUT_NAMES

CODEC_ERROR_MAX = 1e-9


@pytest.fixture(params=INPUT_NAMES)
def parameters(request, speech):
    if request.param not in speech:
        pytest.skip(f"{request.param} is not on this machine")
    x, fs = speech[request.param]
    f0, sp, ap = pyworld.wav2world(x, fs)
    return fs, sp, ap


def relative_error(values, reference):
    return float(np.max(np.abs(values - reference) / np.maximum(np.abs(reference), 1e-300)))


@pytest.mark.parametrize("dimensions", [24, 60])
def test_spectral_envelope(parameters, dimensions):
    fs, sp, _ = parameters
    fft_size = (sp.shape[1] - 1) * 2
    coded = kw.code_spectral_envelope(sp, fs, dimensions)
    reference = pyworld.code_spectral_envelope(sp, fs, dimensions)
    assert coded.dtype == np.float64 and coded.shape == reference.shape
    assert np.max(np.abs(coded - reference)) <= CODEC_ERROR_MAX * np.max(np.abs(reference))
    decoded = kw.decode_spectral_envelope(reference, fs, fft_size)
    expected = pyworld.decode_spectral_envelope(reference, fs, fft_size)
    assert decoded.shape == expected.shape and relative_error(decoded, expected) <= CODEC_ERROR_MAX


def test_aperiodicity(parameters):
    fs, _, ap = parameters
    fft_size = (ap.shape[1] - 1) * 2
    assert kw.get_num_aperiodicities(fs) == pyworld.get_num_aperiodicities(fs)
    coded = kw.code_aperiodicity(ap, fs)
    assert coded.dtype == np.float64 and coded.shape == (ap.shape[0], pyworld.get_num_aperiodicities(fs))
    decoded = kw.decode_aperiodicity(coded, fs, fft_size)
    assert decoded.shape == ap.shape and np.isfinite(decoded).all()
    if pyworld.get_num_aperiodicities(fs) == 0:
        with pytest.raises(IndexError):
            pyworld.code_aperiodicity(ap, fs)
        return
    reference = pyworld.code_aperiodicity(ap, fs)
    assert np.max(np.abs(coded - reference)) <= CODEC_ERROR_MAX * np.max(np.abs(reference))
    expected = pyworld.decode_aperiodicity(reference, fs, fft_size)
    assert relative_error(kw.decode_aperiodicity(reference, fs, fft_size), expected) <= CODEC_ERROR_MAX


def test_bad_input():
    sp = np.ones((10, 513))
    with pytest.raises(ValueError, match="NaN"):
        kw.code_spectral_envelope(np.r_[sp[:-1], np.full((1, 513), np.nan)], 16000, 24)
    with pytest.raises(ValueError):
        kw.code_spectral_envelope(sp, 16000, 0)
    with pytest.raises(ValueError):
        kw.code_aperiodicity(np.zeros((10, 513)), 16000)
    with pytest.raises(ValueError, match="values a frame"):
        kw.decode_aperiodicity(np.zeros((10, 3)), 16000, 1024)
    with pytest.raises(ValueError):
        kw.decode_spectral_envelope(np.zeros((10, 24)), 16000, 1023)
    with pytest.raises(ValueError, match="empty"):
        kw.code_aperiodicity(np.zeros((0, 513)), 16000)
