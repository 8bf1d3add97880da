"""koe.VoiceChanger on numpy arrays: shapes and dtypes, out ++ finish() = input + latency frames, equal to
`koe convert` at the same settings after the latency, settings as properties, 8 kHz voices kept voiced, errors."""

import subprocess

import numpy as np
import pytest
import soundfile

import koe
import pyworld
from conftest import CODEC2_RAW, read_speech

BLOCK = 480


def run_blocks(changer, x, block=BLOCK):
    """x through the changer in blocks along its last axis, then finish(): the whole output."""
    pieces = [changer.process(x[..., start:start + block]) for start in range(0, x.shape[-1], block)]
    for piece, start in zip(pieces, range(0, x.shape[-1], block)):
        assert piece.shape == x[..., start:start + block].shape and piece.dtype == x.dtype
    tail = changer.finish()
    assert tail.dtype == x.dtype and tail.shape[-1] == changer.latency
    return np.concatenate(pieces + [tail], axis=-1)


def cli_conversion(koe_binary, folder, x, fs, *options):
    """`koe convert` of x (written as 32-bit float WAV) with options; the output as float32."""
    source, output = folder / "changer-in.wav", folder / "changer-out.wav"
    soundfile.write(str(source), x.T if x.ndim > 1 else x, fs, subtype="FLOAT")
    subprocess.run([koe_binary, "convert", str(source), str(output), *options], check=True)
    converted, _ = soundfile.read(str(output), dtype="float32", always_2d=True)
    return converted.T if x.ndim > 1 else converted[:, 0]


@pytest.mark.parametrize("live", [False, True], ids=["default", "live"])
def test_blocks_equal_the_cli_conversion_after_the_latency(speech, koe_binary, scratch, live):
    x, fs = speech["samples/en-f-48k.wav"]
    x = x.astype(np.float32)
    changer = koe.VoiceChanger(fs, live=live)
    changer.pitch = 1.2
    changer.formant = 1.1
    out = run_blocks(changer, x)
    assert out.shape == (x.size + changer.latency,)
    assert not out[: changer.latency].any(), "the first latency frames are silence"
    expected = cli_conversion(koe_binary, scratch, x, fs, "--pitch", "1.2", "--formant", "1.1", *(["--live"] if live else []))
    converted = out[changer.latency:]
    assert converted.shape == expected.shape
    assert np.array_equal(converted, expected), f"largest difference {np.max(np.abs(converted - expected))}"


def test_snap_and_vibrato_equal_the_cli_conversion(speech, koe_binary, scratch):
    x, fs = speech["samples/en-m-16k.wav"]
    x = x.astype(np.float32)
    changer = koe.VoiceChanger(fs)
    changer.snap = ("A:minor", 0.8, 20)
    changer.vibrato = (5.5, 50)
    assert changer.snap == ("A:minor", 0.8, 20.0, 440.0) and changer.vibrato == (5.5, 50.0)
    out = run_blocks(changer, x)
    expected = cli_conversion(koe_binary, scratch, x, fs, "--snap", "A:minor", "--snap-strength", "0.8",
                              "--snap-speed", "20", "--vibrato", "5.5:50")
    assert np.array_equal(out[changer.latency:], expected)
    with pytest.raises(ValueError, match="scale|key|mode"):
        changer.snap = "H:minor"
    changer.snap = None
    changer.vibrato = None
    assert changer.snap is None and changer.vibrato is None


def test_float64_and_stereo(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    mono = koe.VoiceChanger(fs)
    mono.pitch = 0.8
    out = run_blocks(mono, x)
    assert out.dtype == np.float64 and out.shape == (x.size + mono.latency,)
    stereo = koe.VoiceChanger(fs, channels=2)
    stereo.pitch = 0.8
    both = run_blocks(stereo, np.stack([x, x[::-1].copy()]))
    assert both.shape == (2, x.size + stereo.latency) and both.dtype == np.float64
    # Each channel on its own: the first is the mono changer's.
    assert np.array_equal(both[0], out)


def test_settings_are_properties(speech):
    changer = koe.VoiceChanger(16000)
    assert (changer.pitch, changer.formant, changer.gain_db, changer.pitch_range) == (1.0, 1.0, 0.0, 1.0)
    assert changer.pitch_median is None and changer.limit and not changer.whisper and changer.preset is None
    changer.semitones = 12
    assert changer.pitch == pytest.approx(2.0)
    assert changer.semitones == pytest.approx(12.0)
    changer.pitch = 100
    assert changer.pitch == 16, "clamped to 1/16...16"
    changer.pitch = float("nan")
    assert changer.pitch == 16, "a non-finite value is ignored"
    changer.gain_db = -6
    changer.pitch_range = 0.5
    changer.pitch_median = 200
    changer.whisper = True
    changer.limit = False
    assert (changer.gain_db, changer.pitch_range, changer.pitch_median, changer.whisper, changer.limit) == (-6, 0.5, 200, True, False)
    changer.pitch_median = None
    assert changer.pitch_median is None
    changer.preset = "kawaii"
    assert changer.preset == "kawaii" and changer.pitch != 16
    changer.eq = ["peak:1000:6:1.4", "lowshelf:200:-3"]
    assert changer.eq == ["peak:1000:6:1.4", "lowshelf:200:-3"]
    assert changer.latency > 0 and changer.sample_rate == 16000 and changer.channels == 1


def test_reset_starts_a_new_stream(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    changer = koe.VoiceChanger(fs)
    changer.pitch = 1.3
    first = run_blocks(changer, x)
    with pytest.raises(ValueError, match="reset"):
        changer.finish()
    with pytest.raises(ValueError):
        changer.process(x[:480])
    changer.reset()
    assert np.array_equal(run_blocks(changer, x), first)


def kept_voicing(x, fs, live):
    """The share of the frames Harvest finds voiced in x that it finds voiced in x changed by pitch 1.2 and formant
    1.1, and the median F0 ratio over them."""
    changer = koe.VoiceChanger(fs, live=live)
    changer.pitch = 1.2
    changer.formant = 1.1
    f0_in, _ = pyworld.harvest(x, fs)
    f0_out, _ = pyworld.harvest(run_blocks(changer, x)[changer.latency:], fs)
    both = (f0_in > 0) & (f0_out > 0)
    return both.sum() / (f0_in > 0).sum(), float(np.median(f0_out[both] / f0_in[both]))


@pytest.mark.parametrize("voice", ["kristoff", "cq_ref"])
@pytest.mark.parametrize("live", [False, True], ids=["default", "live"])
def test_a_deep_voice_at_8khz_keeps_its_voice(voice, live, scratch):
    """Telephone-rate speech, changed, stays voiced at the new pitch (it came out a whisper, 11-21 % of its voiced
    frames kept): at least four fifths as much as the same voice resampled to 16 kHz keeps."""
    path = CODEC2_RAW / f"{voice}.raw"
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    x, fs = read_speech(path)
    wideband = scratch / f"{voice}-16k.wav"
    subprocess.run(["sox", "-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1", str(path), "-r", "16000",
                    "-e", "floating-point", "-b", "32", str(wideband)], check=True)
    x16, fs16 = soundfile.read(str(wideband), dtype="float64")
    kept, ratio = kept_voicing(x, fs, live)
    kept16, _ = kept_voicing(x16, fs16, live)
    assert kept >= 0.8 * kept16, f"{kept:.0%} of voiced frames stay voiced at 8 kHz, {kept16:.0%} at 16 kHz"
    assert abs(ratio - 1.2) <= 0.03 * 1.2, f"F0 ratio {ratio:.3f}"


def test_bad_arguments():
    for rate in (1000, 7999, 192001, 0):
        with pytest.raises(ValueError, match="8000 to 192000"):
            koe.VoiceChanger(rate)
    with pytest.raises(ValueError, match="channels"):
        koe.VoiceChanger(16000, channels=0)
    with pytest.raises(TypeError):
        koe.VoiceChanger(16000.5)
    with pytest.raises(ValueError, match="threads"):
        koe.VoiceChanger(16000, threads=0)
    changer = koe.VoiceChanger(16000)
    with pytest.raises(ValueError, match="NaN or infinity .*at index 3"):
        changer.process(np.array([0, 0, 0, np.nan], dtype=np.float32))
    with pytest.raises(ValueError, match="beyond float32's range.* at index 1"):
        changer.process(np.array([0, 1e300]))
    with pytest.raises(ValueError, match="1-D"):
        changer.process(np.zeros((2, 10), dtype=np.float32))
    with pytest.raises(TypeError, match="float32 or float64"):
        changer.process(np.zeros(10, dtype=np.int16))
    with pytest.raises(ValueError, match="unknown preset"):
        changer.preset = "no such voice"
    with pytest.raises(ValueError, match="peak"):
        changer.eq = ["peak:banana"]
    with pytest.raises(TypeError):
        changer.pitch = "high"
    assert changer.process(np.zeros(0, dtype=np.float32)).shape == (0,)
    stereo = koe.VoiceChanger(16000, channels=2)
    with pytest.raises(ValueError, match=r"\(2, frames\)"):
        stereo.process(np.zeros((3, 10), dtype=np.float32))


def test_a_preset_aims_from_the_profile_it_estimates_as_the_cli_does(speech, koe_binary, scratch):
    """A voice preset aims at its target from the speaker's profile, estimated as the voice runs: the preset's own
    ratios until 0.5 s of voice has been heard, then this speaker's, reached by steps of at most 0.6 semitones in any
    50 ms; the output is `koe convert --live --preset`'s."""
    x, fs = speech["samples/ja-f-16k.wav"]
    x = x.astype(np.float32)
    changer = koe.VoiceChanger(fs, live=True)
    changer.preset = "kawaii"
    assert changer.profile is None
    block = fs // 200
    ratios, pieces = [], []
    for start in range(0, x.size, block):
        pieces.append(changer.process(x[start:start + block]))
        ratios.append(changer.ratios)
    out = np.concatenate(pieces + [changer.finish()])
    profile = changer.profile
    assert set(profile) == {"f0_median_hz", "f0_spread_semitones", "vocal_tract_length_cm", "voiced_seconds"}
    assert abs(profile["f0_median_hz"] / koe.profile(x.astype(np.float64), fs)["f0_median_hz"] - 1) < 0.03
    assert changer.pitch == 1.6 and ratios[0] == (1.6, 1.2), "the preset's own ratios first"
    assert abs(ratios[-1][0] - 300 / profile["f0_median_hz"]) < 0.02 * ratios[-1][0]
    semitones = 12 * np.log2(np.array(ratios))
    steps = [np.ptp(semitones[i:i + 11], axis=0).max() for i in range(len(ratios))]
    assert 0 < max(steps) <= 0.6 + 1e-9
    expected = cli_conversion(koe_binary, scratch, x, fs, "--live", "--preset", "kawaii")
    assert np.array_equal(out[changer.latency:], expected)


def test_a_known_profile_aims_at_once_and_bad_ones_are_refused(speech):
    x, fs = speech["samples/en-m-16k.wav"]
    changer = koe.VoiceChanger(fs, live=True)
    changer.preset = "female"
    changer.profile = {"f0_median_hz": 100.0, "vocal_tract_length_cm": None}
    assert changer.profile["f0_median_hz"] == 100 and np.isnan(changer.profile["vocal_tract_length_cm"])
    changer.process(x[: fs // 2].astype(np.float32))
    assert changer.ratios == (2.1, 1.15), "210 Hz from 100 Hz; the preset's formant ratio where the length is unknown"
    with pytest.raises(ValueError, match="not a voice's profile"):
        changer.profile = {"f0_median_hz": 3.0}
    with pytest.raises(TypeError):
        changer.profile = 120
    with pytest.raises(TypeError):
        changer.profile = {"f0_median_hz": "low"}
    with pytest.raises(ValueError, match="f0_median_hz"):
        changer.profile = {"vocal_tract_length_cm": 15.0}
    changer.profile = None
    assert changer.profile is None
