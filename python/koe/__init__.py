"""koe: a voice changer on numpy arrays, WORLD with pyworld's API (``koe.world``), and ``koe convert`` on files.

    import koe
    changer = koe.VoiceChanger(48000)
    changer.pitch = 1.2
    out = changer.process(block)           # same shape and dtype, `changer.latency` frames late
    koe.convert("in.wav", "out.wav", pitch=1.2, formant=1.1)
    koe.profile(x, fs)                     # {"f0_median_hz": 112.3, "f0_spread_semitones": 7.9, ...}
"""

import collections.abc
import numbers
import operator
import os

import numpy as np

from . import world
from ._native import extension as _koe

__all__ = ["VoiceChanger", "convert", "profile", "world", "CONVERT_OPTIONS"]

#: The options ``convert`` takes: the settings table's names (``koe settings``), ``koe convert``'s long options in
#: snake_case, and ``vibrato``'s two fields on their own.
CONVERT_OPTIONS = frozenset({
    "preset", "pitch", "semitones", "pitch_median", "pitch_range", "formant", "tempo", "whisper", "vocoder",
    "pitch_curve", "f0_file", "snap", "snap_strength", "snap_speed", "a4", "vibrato", "vibrato_rate", "vibrato_depth",
    "eq", "geq", "gain", "no_limit", "f0_method", "frame_period", "f0_floor", "f0_ceil", "look_ahead", "live",
    "threads", "chunk_size",
})


def _text(value):
    """An option's value as the C ABI reads it: numbers in full precision, booleans as 1/0, paths as text."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"an option's value must be a number, a bool or a str (got {type(value).__name__})")


def convert(input, output, **options):
    """Converts the audio file `input` into `output` as ``koe convert input output`` does, with the CLI's long
    options in snake_case: ``pitch=1.2``, ``formant=1.1``, ``semitones=-4``, ``preset="kawaii"``,
    ``eq=["peak:1000:6:1.4"]``, ``gain=-3``, ``tempo=1.5``, ``live=True``, ``f0_method="harvest"``,
    ``no_limit=True``, ... (``CONVERT_OPTIONS`` lists them). Flags take True/False. The output's format follows
    its extension and appears only complete. Runs on the calling thread unless ``threads=`` asks for more (the
    file is the same for any count). Raises ``ValueError`` for bad options or input, ``OSError`` for a file that
    cannot be read or written, ``TypeError`` for an unknown option.
    """
    names, values = [], []
    for name, value in options.items():
        if name not in CONVERT_OPTIONS:
            raise TypeError(f"convert() got an unexpected option '{name}' (options: {', '.join(sorted(CONVERT_OPTIONS))})")
        for item in (value if name == "eq" and isinstance(value, (list, tuple)) else [value]):
            names.append(name)
            values.append(_text(item))
    input, output = os.fspath(input), os.fspath(output)
    if os.path.exists(input) and os.path.exists(output) and os.path.samefile(input, output):
        raise ValueError(f"input and output are the same file: {input}")
    _koe.convert(input, output, names, values)


def profile(x, fs):
    """The profile of the voice in `x` (a 1-D float64 or float32 array of samples) at `fs` Hz, as ``koe profile``
    measures a file: a dict with ``f0_median_hz`` (median F0 of the voiced frames, found as Praat's "To Pitch
    (ac)" finds it), ``f0_spread_semitones`` (between the 10th and 90th percentiles), ``vocal_tract_length_cm``
    (from the formant spacing; NaN when no formant was found) and ``voiced_seconds``. Raises ``TypeError`` for
    something that is not an array of floats, ``ValueError`` for a 2-D array, NaN or infinite samples, `fs`
    outside 8000 to 192000 Hz, or a signal with no voiced frame (silence, noise, too short).
    """
    array = np.asarray(x)
    if array.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must be a float32 or float64 array (got dtype {array.dtype})")
    if array.ndim != 1:
        raise ValueError(f"x must be a 1-D array of samples (got shape {array.shape}); mix or pick a channel first")
    if isinstance(fs, (bool, np.bool_)) or not isinstance(fs, (numbers.Integral, np.integer)):
        raise TypeError(f"fs must be an int (got {type(fs).__name__})")
    if not 8000 <= fs <= 192000:
        raise ValueError(f"fs must be from 8000 to 192000 Hz (got {fs})")
    median, spread, length, voiced = _koe.profile(np.ascontiguousarray(array, dtype=np.float64), int(fs))
    return {"f0_median_hz": median, "f0_spread_semitones": spread, "vocal_tract_length_cm": length,
            "voiced_seconds": voiced}


class VoiceChanger:
    """A voice changer on numpy arrays: blocks in, as many frames out, delayed by exactly ``latency`` frames.

    ``process(x)`` takes a 1-D array for mono and ``(channels, frames)`` otherwise, float32 or float64, and returns
    an array of the same shape and dtype (koe computes in float32). ``finish()`` returns the ``latency`` frames
    still held, so ``concatenate([out..., finish()])`` is the input's conversion preceded by ``latency`` frames of
    silence; at the same settings it equals ``koe convert``'s output (``live=True``: ``koe convert --live``'s).

    The voice settings are properties, settable at any time between blocks (they glide over 50 ms): ``pitch``,
    ``semitones``, ``formant``, ``gain_db``, ``pitch_range``, ``pitch_median`` (None: the voice's own),
    ``whisper``, ``limit`` (the output limiter, on by default), ``eq`` (bands in the CLI's form), ``snap`` (pitch
    correction to a scale), ``vibrato`` and ``preset``.
    Out-of-range values are clamped, as a live changer clamps them; reading gives the value in use. A voice preset
    (``"kawaii"``, ``"female"``, ...) aims at its target from the speaker's ``profile``, estimated as the voice runs:
    ``ratios`` gives what the vocoder applies, ``pitch`` and ``formant`` the preset's own ratios.

    sample_rate: 8000 to 192000 Hz; channels: at least 1; live: koe's lowest-latency analysis (about 47 ms) instead
    of WORLD's (about 215 ms); threads: 1 (the default) computes on the calling thread alone. Not for use from two
    threads at once (a second is refused with RuntimeError); the GIL is released while a block is converted.
    """

    def __init__(self, sample_rate, channels=1, live=False, threads=1):
        sample_rate, channels, threads = operator.index(sample_rate), operator.index(channels), operator.index(threads)
        if not 8000 <= sample_rate <= 192000:
            raise ValueError(f"sample_rate must be from 8000 to 192000 Hz (got {sample_rate})")
        if channels < 1:
            raise ValueError(f"channels must be at least 1 (got {channels})")
        self._changer = _koe.Changer(sample_rate, channels, bool(live), threads)
        self._sample_rate, self._channels, self._live = sample_rate, channels, bool(live)
        self._preset = None
        self._eq = []
        self._snap = None
        self._vibrato = None
        self._dtype = np.dtype(np.float32)

    sample_rate = property(lambda self: self._sample_rate, doc="Frames per second, fixed.")
    channels = property(lambda self: self._channels, doc="Channels, fixed.")
    live = property(lambda self: self._live, doc="Whether the live analysis runs, fixed.")

    @property
    def latency(self):
        """Frames between an input frame and its output frame; fixed for the changer's life."""
        return self._changer.latency

    def _voice(self, name):
        return self._changer.voice()[name]

    def _set(self, name, value):
        is_flag = isinstance(value, (bool, np.bool_))
        if is_flag != (name in ("whisper", "limit")) or not isinstance(value, (numbers.Real, np.bool_)):
            raise TypeError(f"{name} must be {'True or False' if name in ('whisper', 'limit') else 'a number'} "
                            f"(got {type(value).__name__})")
        self._changer.set(name, float(value))

    pitch = property(lambda self: self._voice("pitch"), lambda self, v: self._set("pitch", v),
                     doc="F0 ratio, 2 an octave up; clamped to 1/16...16.")
    formant = property(lambda self: self._voice("formant"), lambda self, v: self._set("formant", v),
                       doc="Spectral envelope's frequency-axis ratio (> 1 moves formants up); clamped to 1/16...16.")
    gain_db = property(lambda self: self._voice("gain_db"), lambda self, v: self._set("gain_db", v),
                       doc="Output gain in dB; clamped to -60...60.")
    pitch_range = property(lambda self: self._voice("pitch_range"), lambda self, v: self._set("pitch_range", v),
                           doc="Scale of F0 excursions around the running median: 0 monotone, 1 unchanged (0...10).")

    @property
    def semitones(self):
        """The pitch as a shift in semitones (the same setting as pitch)."""
        return 12 * np.log2(self.pitch)

    @semitones.setter
    def semitones(self, value):
        self._set("semitones", value)

    @property
    def pitch_median(self):
        """The median F0 to move the voice to, in Hz (10...5000), or None to keep the voice's own."""
        median = self._voice("pitch_median")
        return None if median == 0 else median

    @pitch_median.setter
    def pitch_median(self, value):
        if value is not None and not float(value) > 0:
            raise ValueError(f"pitch_median must be a positive number of Hz or None (got {value})")
        self._set("pitch_median", 0.0 if value is None else value)

    whisper = property(lambda self: self._voice("whisper"), lambda self, v: self._set("whisper", bool(v)),
                       doc="Replace the excitation by noise.")
    limit = property(lambda self: self._voice("limit"), lambda self, v: self._set("limit", bool(v)),
                     doc="The output limiter that keeps every sample within +-1 (default True).")

    @property
    def preset(self):
        """The named voice last applied (``koe presets`` lists them), or None. Setting one sets pitch, pitch range,
        formant, whisper and the EQ; settings changed afterwards override it. A voice preset aims its pitch and
        formant at its target from the speaker's ``profile``: the preset's ratios until it is known, then this
        speaker's, reached at 12 semitones a second."""
        return self._preset

    @preset.setter
    def preset(self, name):
        if not isinstance(name, str):
            raise TypeError(f"preset must be a str (got {type(name).__name__})")
        self._changer.set_preset(name)
        self._preset = name
        self._eq = []

    @property
    def eq(self):
        """EQ bands set through this property, in the CLI's ``--eq`` form (``"peak:1000:6:1.4"``)."""
        return list(self._eq)

    @eq.setter
    def eq(self, specs):
        specs = [specs] if isinstance(specs, str) else list(specs)
        if not all(isinstance(spec, str) for spec in specs):
            raise TypeError("eq must be a str or a list of str such as 'peak:1000:6:1.4'")
        self._changer.set_equalizer(specs)
        self._eq = specs

    @property
    def snap(self):
        """Pitch correction as set: None (off), or (scale, strength, speed_ms, a4_hz)."""
        return self._snap

    @snap.setter
    def snap(self, value):
        """Set a scale (``"A:minor"``, ``"chromatic"``), a tuple (scale, strength=1, speed_ms=0, a4_hz=440), or None."""
        if value is None:
            self._changer.set_snap(None, 1.0, 0.0, 440.0)
            self._snap = None
            return
        scale, *rest = (value,) if isinstance(value, str) else tuple(value)
        if not isinstance(scale, str) or len(rest) > 3:
            raise TypeError("snap takes a scale such as 'A:minor', a tuple (scale, strength, speed_ms, a4_hz), or None")
        strength, speed, a4 = (list(map(float, rest)) + [1.0, 0.0, 440.0][len(rest):])
        self._changer.set_snap(scale, strength, speed, a4)
        self._snap = (scale, strength, speed, a4)

    @property
    def vibrato(self):
        """A sinusoidal vibrato on voiced frames as set: None (off) or (rate_hz, depth_cents)."""
        return self._vibrato

    @vibrato.setter
    def vibrato(self, value):
        if value is None:
            self._changer.set_vibrato(0.0, 0.0)
            self._vibrato = None
            return
        rate, depth = map(float, value)
        if not rate > 0:
            raise ValueError(f"vibrato rate must be a positive number of Hz (got {rate})")
        self._changer.set_vibrato(rate, depth)
        self._vibrato = (rate, depth)

    _PROFILE_KEYS = ("f0_median_hz", "f0_spread_semitones", "vocal_tract_length_cm", "voiced_seconds")

    @property
    def profile(self):
        """The speaker's profile a voice preset aims from, a dict as ``koe.profile`` returns: the changer estimates it
        as the voice runs, once 0.5 s of voiced speech has been heard (silence, whisper and breath leave it as it is);
        until then the one set here, or None. Set a profile measured before (``koe.profile(x, fs)`` of the same
        speaker, or the JSON ``koe profile --json`` wrote, loaded) to aim from the first block; None forgets it."""
        figures = self._changer.profile()
        return None if figures is None else dict(zip(self._PROFILE_KEYS, figures))

    @profile.setter
    def profile(self, value):
        if value is None:
            self._changer.set_profile(None)
            return
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"profile must be a dict as koe.profile returns, or None (got {type(value).__name__})")
        if "f0_median_hz" not in value:
            raise ValueError("profile needs f0_median_hz")
        defaults = {"f0_spread_semitones": 0.0, "vocal_tract_length_cm": None, "voiced_seconds": 0.0}
        figures = []
        for key in self._PROFILE_KEYS:
            figure = value.get(key, defaults.get(key))
            if figure is None and key == "vocal_tract_length_cm":
                figure = float("nan")
            if isinstance(figure, (bool, np.bool_)) or not isinstance(figure, (numbers.Real, np.floating, np.integer)):
                raise TypeError(f"profile's {key} must be a number (got {type(figure).__name__})")
            figures.append(float(figure))
        self._changer.set_profile(*figures)

    @property
    def ratios(self):
        """(pitch, formant): the ratios the vocoder gave its latest frame; while a preset aims, the aimed ones, where
        ``pitch`` and ``formant`` keep the preset's own."""
        return self._changer.ratios()

    def _planar(self, x):
        """x as (channels, frames) C-contiguous float32, checked; and its dtype."""
        array = np.asarray(x)
        if array.dtype not in (np.float32, np.float64):
            raise TypeError(f"audio must be a float32 or float64 array (got dtype {array.dtype})")
        if self._channels == 1 and array.ndim != 1:
            raise ValueError(f"a mono changer takes a 1-D array (got shape {array.shape})")
        if self._channels > 1 and (array.ndim != 2 or array.shape[0] != self._channels):
            raise ValueError(f"a {self._channels}-channel changer takes a ({self._channels}, frames) array (got shape {array.shape})")
        with np.errstate(over="ignore"):  # a value beyond float32's range becomes infinity, refused below
            planar = np.ascontiguousarray(array.reshape(self._channels, -1), dtype=np.float32)
        if not np.isfinite(planar).all():
            position = np.unravel_index(np.flatnonzero(~np.isfinite(planar))[0], planar.shape)
            index = position if array.ndim > 1 else position[1]
            raise ValueError(f"the audio holds NaN or infinity (or a value beyond float32's range) at index {index}")
        return planar, array.dtype

    def process(self, x):
        """Converts the next block; returns as many frames, of x's shape and dtype."""
        planar, dtype = self._planar(x)
        output = np.empty_like(planar)
        self._changer.process(planar, output, planar.shape[1])
        self._dtype = dtype
        return output.reshape(np.shape(x)).astype(dtype, copy=False)

    def finish(self):
        """Ends the stream: the ``latency`` frames still held, shaped and typed as the last block. Call ``reset()``
        before a new stream."""
        output = np.empty((self._channels, self.latency), dtype=np.float32)
        self._changer.finish(output)
        shaped = output[0] if self._channels == 1 else output
        return shaped.astype(self._dtype, copy=False)

    def reset(self):
        """Forgets the stream (held frames become silence); the settings stay."""
        self._changer.reset()
