"""WORLD's analysis and synthesis with pyworld's API: ``import koe.world as pw``.

The functions, their positional and keyword arguments, defaults, float64 results and shapes are pyworld 0.3.x's;
the numbers are WORLD's (see koe's conformance tests). What differs: float32 input is accepted (and gives the
float64 result), bad input raises ``ValueError`` or ``TypeError`` instead of crashing or computing NaN, and the
GIL is released while koe computes, so threads calling these functions run at once. Below 15.8 kHz, ``d4c``
gives what WORLD computes when the memory its voicing test reads past Nyquist is zero; pyworld reads whatever
that memory held, and calls most frames unvoiced. Every call computes on the calling thread, as pyworld's do;
``cheaptrick``, ``d4c`` and ``wav2world`` take ``threads=`` to use more.
"""

import operator

import numpy as np

from ._native import extension as _koe

__all__ = [
    "dio", "harvest", "stonemask", "cheaptrick", "d4c", "synthesize", "get_cheaptrick_fft_size",
    "get_cheaptrick_f0_floor", "wav2world", "get_num_aperiodicities", "code_aperiodicity", "decode_aperiodicity",
    "code_spectral_envelope", "decode_spectral_envelope",
]

default_frame_period = 5.0
default_f0_floor = 71.0
default_f0_ceil = 800.0


def _rate(fs):
    """fs as an int: a positive whole number of Hz (an integral float is taken, as pyworld takes it)."""
    if isinstance(fs, (float, np.floating)):
        if not (np.isfinite(fs) and float(fs).is_integer()):
            raise ValueError(f"fs must be a whole number of Hz (got {fs})")
        fs = int(fs)
    try:
        fs = operator.index(fs)
    except TypeError:
        raise TypeError(f"fs must be an int (got {type(fs).__name__})") from None
    if fs <= 0:
        raise ValueError(f"fs must be positive (got {fs})")
    if fs > 2 ** 31 - 1:
        raise ValueError(f"sample rate {fs} Hz is not supported (8000 to 192000 Hz)")
    return fs


def _array(values, name, ndim, finite=True, empty_rows=False):
    """values as a C-contiguous float64 array of `ndim` dimensions; float32 and float64 are taken. `empty_rows`:
    rows of no values are taken (coded aperiodicity below 12 kHz)."""
    array = np.asarray(values)
    if array.dtype not in (np.float64, np.float32):
        raise TypeError(f"{name} must be a float64 or float32 array (got dtype {array.dtype})")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D (got shape {array.shape})")
    if array.size == 0 and not (empty_rows and array.shape[0] > 0):
        raise ValueError(f"{name} is empty")
    if finite and not np.isfinite(array).all():
        position = np.unravel_index(np.flatnonzero(~np.isfinite(array))[0], array.shape)
        raise ValueError(f"{name} holds NaN or infinity at index {position if ndim > 1 else position[0]}")
    return np.ascontiguousarray(array, dtype=np.float64)


def _signal(x):
    return _array(x, "x", 1)


def _contour(f0, temporal_positions):
    f0 = _array(f0, "f0", 1)
    time = _array(temporal_positions, "temporal_positions", 1)
    if f0.shape != time.shape:
        raise ValueError(f"f0 has {f0.size} frames but temporal_positions {time.size}")
    return f0, time


def _fft_size(fs, fft_size):
    """fft_size as an int CheapTrick accepts at fs, checked before anything is allocated for it."""
    fft_size = operator.index(fft_size)
    if not 0 < fft_size < 2 ** 31:
        raise ValueError(f"FFT size {fft_size} is not one CheapTrick takes")
    _koe.cheaptrick_f0_floor(fs, fft_size)  # raises ValueError, with the sizes taken, unless fs suits it
    return fft_size


def _threads(threads):
    threads = operator.index(threads)
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be from 1 to 1024 (got {threads})")
    return threads


def dio(x, fs, f0_floor=default_f0_floor, f0_ceil=default_f0_ceil, channels_in_octave=2.0,
        frame_period=default_frame_period, speed=1, allowed_range=0.1):
    """DIO F0 estimation.

    x: the signal (1-D float64 or float32); fs: its sample rate in Hz; f0_floor, f0_ceil: the F0 range searched
    (Hz); channels_in_octave: bands per octave; frame_period: ms between frames; speed: decimation 1-12;
    allowed_range: voiced/unvoiced threshold. Returns (f0, temporal_positions), float64, 0 where unvoiced.
    """
    x, fs = _signal(x), _rate(fs)
    frames = _koe.frame_count(fs, float(frame_period), x.size)
    f0, time = np.empty(frames), np.empty(frames)
    _koe.dio(x, fs, float(f0_floor), float(f0_ceil), float(channels_in_octave), float(frame_period),
             operator.index(speed), float(allowed_range), f0, time)
    return f0, time


def harvest(x, fs, f0_floor=default_f0_floor, f0_ceil=default_f0_ceil, frame_period=default_frame_period):
    """Harvest F0 estimation. Arguments and result as dio's: (f0, temporal_positions)."""
    x, fs = _signal(x), _rate(fs)
    frames = _koe.frame_count(fs, float(frame_period), x.size)
    f0, time = np.empty(frames), np.empty(frames)
    _koe.harvest(x, fs, float(f0_floor), float(f0_ceil), float(frame_period), f0, time)
    return f0, time


def stonemask(x, f0, temporal_positions, fs):
    """StoneMask F0 refinement: the F0 of each frame refined from the signal around it (float64)."""
    x, fs = _signal(x), _rate(fs)
    f0, time = _contour(f0, temporal_positions)
    refined = np.empty(f0.size)
    _koe.stonemask(x, fs, time, f0, refined)
    return refined


def get_cheaptrick_fft_size(fs, f0_floor=default_f0_floor):
    """The FFT size CheapTrick uses at this sample rate and F0 floor."""
    return _koe.cheaptrick_fft_size(_rate(fs), float(f0_floor))


def get_cheaptrick_f0_floor(fs, fft_size):
    """The lowest F0 CheapTrick analyses with an FFT of fft_size; frames below are analysed as unvoiced."""
    return _koe.cheaptrick_f0_floor(_rate(fs), operator.index(fft_size))


def cheaptrick(x, f0, temporal_positions, fs, q1=-0.15, f0_floor=default_f0_floor, fft_size=None, threads=1):
    """CheapTrick spectral envelope: (frames, fft_size // 2 + 1) power spectra, float64.

    q1: spectral recovery parameter; f0_floor sets the FFT size when fft_size is None (when fft_size is given,
    f0_floor is not used, as in pyworld); threads: threads to use (koe's; default 1, the calling thread).
    """
    x, fs = _signal(x), _rate(fs)
    f0, time = _contour(f0, temporal_positions)
    fft_size = get_cheaptrick_fft_size(fs, f0_floor) if fft_size is None else _fft_size(fs, fft_size)
    spectrogram = np.empty((f0.size, fft_size // 2 + 1))
    _koe.cheaptrick(x, fs, time, f0, float(q1), fft_size, _threads(threads), spectrogram)
    return spectrogram


def d4c(x, f0, temporal_positions, fs, threshold=0.85, fft_size=None, threads=1):
    """D4C aperiodicity: (frames, fft_size // 2 + 1) values in (0, 1], float64.

    threshold: voiced/unvoiced threshold (0 keeps every F0 frame voiced); fft_size: CheapTrick's (None: the one at
    the default F0 floor); threads: threads to use (koe's; default 1, the calling thread).
    """
    x, fs = _signal(x), _rate(fs)
    f0, time = _contour(f0, temporal_positions)
    fft_size = get_cheaptrick_fft_size(fs) if fft_size is None else _fft_size(fs, fft_size)
    aperiodicity = np.empty((f0.size, fft_size // 2 + 1))
    _koe.d4c(x, fs, time, f0, float(threshold), fft_size, _threads(threads), aperiodicity)
    return aperiodicity


def synthesize(f0, spectrogram, aperiodicity, fs, frame_period=default_frame_period):
    """WORLD synthesis: the waveform (float64) of int(frames * frame_period * fs / 1000) samples."""
    fs = _rate(fs)
    f0 = _array(f0, "f0", 1)
    spectrogram = _array(spectrogram, "spectrogram", 2)
    aperiodicity = _array(aperiodicity, "aperiodicity", 2)
    if spectrogram.shape[0] != f0.size:
        raise ValueError(f"spectrogram has {spectrogram.shape[0]} frames but f0 has {f0.size}")
    if aperiodicity.shape != spectrogram.shape:
        raise ValueError(f"aperiodicity has shape {aperiodicity.shape} but spectrogram {spectrogram.shape}")
    y = np.empty(_koe.synthesis_length(fs, float(frame_period), f0.size))
    _koe.synthesize(f0, spectrogram, aperiodicity, spectrogram.shape[1], fs, float(frame_period), y)
    return y


def get_num_aperiodicities(fs):
    """Values a frame of coded aperiodicity holds at fs: WORLD's bands 3 kHz apart, none below 12 kHz."""
    return _koe.aperiodicity_band_count(_rate(fs))


def _fft_size_of(spectra, name):
    bins = spectra.shape[1]
    if bins < 2:
        raise ValueError(f"{name} has {bins} bins a frame; fft_size // 2 + 1 are needed")
    return (bins - 1) * 2


def code_aperiodicity(aperiodicity, fs):
    """Aperiodicity coded to get_num_aperiodicities(fs) values a frame (dB at bands 3 kHz apart), float64.

    Below 12 kHz there are no bands: the result has frames of no values (where pyworld raises IndexError), and
    decoding it gives the aperiodicity WORLD's decoder gives.
    """
    fs = _rate(fs)
    aperiodicity = _array(aperiodicity, "aperiodicity", 2)
    fft_size = _fft_size_of(aperiodicity, "aperiodicity")
    frames, bands = aperiodicity.shape[0], get_num_aperiodicities(fs)
    coded = np.empty((frames, bands))
    _koe.code_aperiodicity(aperiodicity, frames, aperiodicity.shape[1], bands, fs, fft_size, 0, coded)
    return coded


def decode_aperiodicity(coded_aperiodicity, fs, fft_size):
    """The aperiodicity, (frames, fft_size // 2 + 1), that coded_aperiodicity stands for."""
    fs = _rate(fs)
    fft_size = _fft_size(fs, fft_size)
    coded = _array(coded_aperiodicity, "coded_aperiodicity", 2, empty_rows=True)
    frames, bands = coded.shape
    if bands != get_num_aperiodicities(fs):
        raise ValueError(f"coded_aperiodicity has {bands} values a frame; {get_num_aperiodicities(fs)} at {fs} Hz")
    aperiodicity = np.empty((frames, fft_size // 2 + 1))
    _koe.decode_aperiodicity(coded, frames, bands, aperiodicity.shape[1], fs, fft_size, 0, aperiodicity)
    return aperiodicity


def code_spectral_envelope(spectrogram, fs, number_of_dimensions):
    """The spectral envelope coded to number_of_dimensions coefficients a frame (mel-cepstrum-like), float64."""
    fs, dimensions = _rate(fs), operator.index(number_of_dimensions)
    spectrogram = _array(spectrogram, "spectrogram", 2)
    fft_size = _fft_size_of(spectrogram, "spectrogram")
    frames = spectrogram.shape[0]
    if not 1 <= dimensions <= fft_size // 2:
        raise ValueError(f"a coded envelope of FFT size {fft_size} has 1 to {fft_size // 2} dimensions (got {dimensions})")
    coded = np.empty((frames, dimensions))
    _koe.code_spectral_envelope(spectrogram, frames, spectrogram.shape[1], coded.shape[1], fs, fft_size, dimensions, coded)
    return coded


def decode_spectral_envelope(coded_spectral_envelope, fs, fft_size):
    """The spectral envelope, (frames, fft_size // 2 + 1), that coded_spectral_envelope stands for."""
    fs = _rate(fs)
    fft_size = _fft_size(fs, fft_size)
    coded = _array(coded_spectral_envelope, "coded_spectral_envelope", 2)
    frames, dimensions = coded.shape
    spectrogram = np.empty((frames, fft_size // 2 + 1))
    _koe.decode_spectral_envelope(coded, frames, dimensions, spectrogram.shape[1], fs, fft_size, dimensions, spectrogram)
    return spectrogram


def wav2world(x, fs, fft_size=None, frame_period=default_frame_period, threads=1):
    """All of WORLD's analysis in one call: DIO refined by StoneMask, CheapTrick and D4C at their defaults.
    Returns (f0, sp, ap)."""
    x = _signal(x)
    rough, time = dio(x, fs, frame_period=frame_period)
    f0 = stonemask(x, rough, time, fs)
    sp = cheaptrick(x, f0, time, fs, fft_size=fft_size, threads=threads)
    ap = d4c(x, f0, time, fs, fft_size=fft_size, threads=threads)
    return f0, sp, ap
