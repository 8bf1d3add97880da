"""koe.world against pyworld on real speech at 8 to 48 kHz: defaults, and the keywords RVC (Harvest 50-1100 Hz,
10 ms) and the VOICEVOX engine (1 ms frames) use. Bars: V/UV identical, F0 relative error <= 1e-9, envelope
log-spectral distance <= 0.01 dB, aperiodicity within 0.5 dB on average, synthesis >= 60 dB SNR."""

import numpy as np
import pytest
import pyworld

import koe.world as kw
from conftest import aperiodicity_difference, f0_relative_error, log_spectral_distance, snr, speech_files

F0_ERROR_MAX = 1e-9
ENVELOPE_LSD_MAX = 0.01
APERIODICITY_MAX = 0.5
SYNTHESIS_SNR_MIN = 60.0

# The F0 keywords each user passes: pyworld's defaults, RVC's Harvest, the VOICEVOX engine's 1 ms frames.
KEYWORDS = {
    "defaults": {},
    "rvc": {"f0_floor": 50.0, "f0_ceil": 1100.0, "frame_period": 10.0},
    "voicevox": {"frame_period": 1.0},
}

INPUT_NAMES = [name for name, _ in speech_files()] + [f"corpus/hts1a@{rate}" for rate in (16000, 44100, 48000)]


@pytest.fixture(params=INPUT_NAMES)
def signal(request, speech):
    if request.param not in speech:
        pytest.skip(f"{request.param} is not on this machine")
    return speech[request.param]


def check_f0(koe_result, reference):
    f0, time = koe_result
    assert f0.dtype == np.float64 and time.dtype == np.float64
    assert f0.shape == reference[0].shape
    assert np.array_equal(time, reference[1])
    assert np.array_equal(f0 > 0, reference[0] > 0), "voiced/unvoiced decisions differ"
    assert f0_relative_error(f0, reference[0]) <= F0_ERROR_MAX


@pytest.mark.parametrize("keywords", KEYWORDS.values(), ids=KEYWORDS.keys())
def test_harvest_and_stonemask(signal, keywords):
    x, fs = signal
    reference = pyworld.harvest(x, fs, **keywords)
    check_f0(kw.harvest(x, fs, **keywords), reference)
    refined = pyworld.stonemask(x, *reference, fs)
    mine = kw.stonemask(x, *reference, fs)
    assert mine.dtype == np.float64
    check_f0((mine, reference[1]), (refined, reference[1]))


# Where a recording falls to exact digital silence, WORLD's band signals past the filters' reach are its FFT's
# rounding noise (1e-17 of the band's peak), and the first zero crossing in that noise ends the interval that the
# last frames before the silence interpolate their F0 from. Only WORLD's own transform, size and order of operations
# reproduce that noise: numpy's FFT of the whole signal, fed into WORLD's own DIO (instrumented from mmorise/World),
# differs on exactly the frames koe does (de-m-48k frames 451-452: the crossing at sample 109956, not 109958; F0
# off by 1.2e-5). koe's transforms are FFTW's; these cases are the recordings of the test set with such
# frames (de-m-48k: 2 of 264 voiced frames at 5 ms, 14 of 1490 at 1 ms, up to 1.1e-4; en-m-16k with RVC's keywords,
# 2 of 157, 3.5e-7). Strict: the day they match, these fail and the marks go.
DIO_SILENCE_EDGES = {("samples/de-m-48k.wav", "defaults"), ("samples/de-m-48k.wav", "rvc"),
                     ("samples/de-m-48k.wav", "voicevox"), ("samples/en-m-16k.wav", "rvc")}


@pytest.mark.parametrize("keywords", KEYWORDS.values(), ids=KEYWORDS.keys())
def test_dio(signal, keywords, request):
    x, fs = signal
    case = (request.node.callspec.params["signal"], request.node.callspec.id.split("-")[-1])
    if case in DIO_SILENCE_EDGES:
        request.applymarker(pytest.mark.xfail(strict=True, reason="F0 before digital silence follows WORLD's FFT rounding noise"))
    check_f0(kw.dio(x, fs, **keywords), pyworld.dio(x, fs, **keywords))


@pytest.mark.parametrize("frame_period", [5.0, 1.0])
def test_envelope_aperiodicity_and_synthesis(signal, frame_period):
    x, fs = signal
    f0, time = pyworld.harvest(x, fs, frame_period=frame_period)
    sp = kw.cheaptrick(x, f0, time, fs)
    reference_sp = pyworld.cheaptrick(x, f0, time, fs)
    assert sp.dtype == np.float64 and sp.shape == reference_sp.shape
    assert log_spectral_distance(sp, reference_sp) <= ENVELOPE_LSD_MAX
    ap = kw.d4c(x, f0, time, fs)
    reference_ap = pyworld.d4c(x, f0, time, fs)
    assert ap.dtype == np.float64 and ap.shape == reference_ap.shape
    assert aperiodicity_difference(ap, reference_ap) <= APERIODICITY_MAX
    y = kw.synthesize(f0, reference_sp, reference_ap, fs, frame_period)
    reference_y = pyworld.synthesize(f0, reference_sp, reference_ap, fs, frame_period)
    assert y.dtype == np.float64 and y.shape == reference_y.shape
    assert snr(y, reference_y) >= SYNTHESIS_SNR_MIN


def test_keywords_of_cheaptrick_and_d4c(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    f0, time = pyworld.dio(x, fs)
    for keywords in ({"q1": -0.3}, {"f0_floor": 40.0}, {"fft_size": 2048}):
        assert log_spectral_distance(kw.cheaptrick(x, f0, time, fs, **keywords),
                                     pyworld.cheaptrick(x, f0, time, fs, **keywords)) <= ENVELOPE_LSD_MAX
    for keywords in ({"threshold": 0.0}, {"fft_size": 2048}):
        assert aperiodicity_difference(kw.d4c(x, f0, time, fs, **keywords),
                                       pyworld.d4c(x, f0, time, fs, **keywords)) <= APERIODICITY_MAX
    # Positional arguments in pyworld's order.
    assert np.array_equal(kw.cheaptrick(x, f0, time, fs, -0.15, 71.0, None), kw.cheaptrick(x, f0, time, fs))
    assert np.array_equal(kw.d4c(x, f0, time, fs, 0.85, None), kw.d4c(x, f0, time, fs))
    assert np.array_equal(kw.dio(x, fs, 71.0, 800.0, 2.0, 5.0, 1, 0.1)[0], kw.dio(x, fs)[0])


def test_threads_change_nothing(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    f0, time = kw.harvest(x, fs)
    assert np.array_equal(kw.cheaptrick(x, f0, time, fs, threads=2), kw.cheaptrick(x, f0, time, fs))
    assert np.array_equal(kw.d4c(x, f0, time, fs, threads=2), kw.d4c(x, f0, time, fs))


def test_wav2world(speech):
    x, fs = speech["samples/en-f-48k.wav"]
    f0, sp, ap = kw.wav2world(x, fs)
    reference = pyworld.wav2world(x, fs)
    check_f0((f0, np.arange(f0.size) * 0.005), (reference[0], np.arange(f0.size) * 0.005))
    assert log_spectral_distance(sp, reference[1]) <= ENVELOPE_LSD_MAX
    assert aperiodicity_difference(ap, reference[2]) <= APERIODICITY_MAX


@pytest.mark.parametrize("fs", [8000, 16000, 22050, 44100, 48000, 96000])
def test_sizes(fs):
    for floor in (71.0, 50.0, 40.0):
        assert kw.get_cheaptrick_fft_size(fs, floor) == pyworld.get_cheaptrick_fft_size(fs, floor)
    size = pyworld.get_cheaptrick_fft_size(fs)
    assert kw.get_cheaptrick_f0_floor(fs, size) == pyworld.get_cheaptrick_f0_floor(fs, size)


def test_float32_gives_the_float64_result(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    x32 = x.astype(np.float32)
    x64 = x32.astype(np.float64)
    assert all(np.array_equal(a, b) for a, b in zip(kw.harvest(x32, fs), kw.harvest(x64, fs)))
    f0, time = kw.dio(x64, fs)
    ap = kw.d4c(x32, f0.astype(np.float32), time, fs)
    assert ap.dtype == np.float64 and np.isfinite(ap).all()
    assert np.array_equal(ap, kw.d4c(x64, f0.astype(np.float32).astype(np.float64), time, fs))
    assert np.array_equal(kw.cheaptrick(x32, f0, time, fs), kw.cheaptrick(x64, f0, time, fs))


def test_non_contiguous_input_is_taken(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    stereo = np.stack([x, x], axis=1)
    assert np.array_equal(kw.dio(stereo[:, 0], fs)[0], kw.dio(x, fs)[0])


class TestBadInput:
    x = np.sin(np.arange(16000) * 0.05)

    @pytest.mark.parametrize("bad, message", [
        (np.array([]), "empty"),
        (np.zeros((2, 8000)), "1-D"),
        (np.r_[np.zeros(4000), np.nan, np.zeros(4000)], "NaN or infinity at index 4000"),
        (np.r_[np.zeros(4000), np.inf, np.zeros(4000)], "NaN or infinity"),
        (np.zeros(10), "too short"),
    ])
    def test_signals(self, bad, message):
        for function in (kw.dio, kw.harvest, kw.wav2world):
            with pytest.raises(ValueError, match=message):
                function(bad, 16000)

    def test_types(self):
        with pytest.raises(TypeError, match="float64 or float32"):
            kw.harvest(np.zeros(16000, dtype=np.int16), 16000)
        with pytest.raises(TypeError, match="float64 or float32"):
            kw.harvest(["a"] * 100, 16000)
        with pytest.raises(TypeError, match="fs must be an int"):
            kw.harvest(self.x, "16000")

    @pytest.mark.parametrize("fs", [0, -16000, 1000, 10 ** 6, 10 ** 12])
    def test_rates(self, fs):
        with pytest.raises(ValueError):
            kw.harvest(self.x, fs)
        with pytest.raises(ValueError):
            kw.get_cheaptrick_fft_size(fs)

    def test_mismatched_lengths(self):
        f0, time = kw.dio(self.x, 16000)
        for function in (kw.stonemask, kw.cheaptrick, kw.d4c):
            with pytest.raises(ValueError, match="frames"):
                function(self.x, f0, time[:-1], 16000)
        sp = kw.cheaptrick(self.x, f0, time, 16000)
        ap = kw.d4c(self.x, f0, time, 16000)
        with pytest.raises(ValueError, match="frames"):
            kw.synthesize(f0[:-1], sp, ap, 16000)
        with pytest.raises(ValueError, match="shape"):
            kw.synthesize(f0, sp, ap[:, :-1], 16000)
        with pytest.raises(ValueError, match="bins|FFT"):
            kw.synthesize(f0, sp[:, :3], ap[:, :3], 16000)
        with pytest.raises(ValueError, match="NaN"):
            kw.synthesize(np.r_[f0[:-1], np.nan], sp, ap, 16000)

    def test_options(self):
        with pytest.raises(ValueError, match="F0 floor"):
            kw.harvest(self.x, 16000, f0_floor=0)
        with pytest.raises(ValueError, match="frame period"):
            kw.dio(self.x, 16000, frame_period=-1)
        with pytest.raises(ValueError, match="FFT size"):
            kw.cheaptrick(self.x, *kw.dio(self.x, 16000), 16000, fft_size=64)
        for size in (2 ** 40, -2, 1 << 17):
            with pytest.raises(ValueError, match="FFT size"):
                kw.cheaptrick(self.x, *kw.dio(self.x, 16000), 16000, fft_size=size)
            with pytest.raises(ValueError, match="FFT size"):
                kw.decode_spectral_envelope(np.ones((3, 24)), 16000, size)
        with pytest.raises(ValueError, match="dimensions"):
            kw.code_spectral_envelope(np.ones((3, 513)), 16000, 10 ** 12)
        with pytest.raises(ValueError, match="threads"):
            kw.d4c(self.x, *kw.dio(self.x, 16000), 16000, threads=0)
