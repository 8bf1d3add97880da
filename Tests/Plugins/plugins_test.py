#!/usr/bin/env python3
"""koe's LV2 and LADSPA plugins in real hosts, and Rubber Band's own shifters through the same checks (the anchor).

Usage: python3 Tests/Plugins/plugins_test.py --plugins .build/plugins --koe .build/release/koe
(`make test-plugins` builds the plugins, installs the hosts from Debian and runs this and live_test.py.)

Hosts, each started by the test as the issue's command lines have them:
  lv2apply   LV2_PATH=DIR lv2apply -i IN -o OUT -c SYMBOL VALUE ... URI   (no host features, run() one frame at a
             time, no latency compensation)
  sox        LADSPA_PATH=DIR sox --buffer 32768 IN OUT ladspa -l PLUGIN.so LABEL VALUE ...   (-l: sox reads the
             `latency` port after the first run() and removes that many frames)
Contenders: koe-lv2 (urn:koe:voice), koe-ladspa (koe_voice), rubberband-lv2 (lv2-rubberband#mono),
rubberband-ladspa (rubberband-pitchshifter-mono). Debian's Rubber Band R3 LV2 plugin cannot be loaded
(its Turtle names #r3mono, its binary lv2-rubberband-r3#mono), so the anchor is the R2 engine in both hosts.

Inputs: samples/*.wav at their own rate, and ../shared/corpus/*.wav (when that folder exists) at 16 and 48 kHz,
as 32-bit float WAV (so a NaN would reach the output file), each followed by 1 s of silence: lv2apply stops when
the input does, and without the silence a plugin's latency would hold back the end of the speech. For every contender and input:
  shift      pitch 1.2 (Rubber Band: 3 semitones 16 cents): output as long as the input, every sample finite,
             Praat's F0 of the output / of the input (median over jointly voiced frames, the output read the
             reported latency late where the host does not compensate) within 2 % of 1.2.
  latency    the plugin's `latency` port (read as a host reads it: instantiate, activate, one run(), the port)
             against the delay measured by cross-correlation with the same processing done without latency:
             `koe convert --live` with the same settings for koe (run at pitch 1.2), the input itself for Rubber Band
             (run at 0 semitones, where it passes the input through). Exact to within one host block, and the
             match must be real (correlation >= 0.99). In sox, whose -l removes the reported latency, the measured
             delay must be 0 there. For koe, the output read that late must also be `koe convert --live`'s
             own samples at the pitch the float control port holds: SNR >= 150 dB in lv2apply (the plugins and
             the CLI run one engine, so they are bit for bit equal; sox's 32-bit integer samples allow about 130).
  unity      the issue's bar: pitch 1, formant 1, gain -6 dB (Rubber Band: 0 semitones, no gain port, 0 dB) against
             the input: the output lags by the reported latency within 5 ms (cross-correlation of the 20 ms
             envelopes, see measures.envelope) at the gain set +-1.5 dB. WORLD's own resynthesis of the input
             (pyworld, no latency at all) is measured the same way and printed beside koe's figures: what the
             vocoder does alone.
For each koe plugin:
  controls   pitch, formant, gain_db, snap and vibrato_rate at 0, -1, NaN and 1e9 on one input: no crash, finite
             samples, exact length, and the same output as the value clamped to the port's range (NaN: the default).
  voice      every other voice port set at once (pitch_range, snap and its key, strength and speed, vibrato rate
             and depth; then whisper): the output read the latency late is `koe convert --live` of the input as a
             raw stream (a plugin's pitch range, like a pipe's, works around the running median) with the same
             settings as flags, bit for bit in lv2apply (SNR >= 150 dB), the figure printed for sox.
For every contender:
  realtime   the host run under Tests/Plugins/call_counter.c (LD_PRELOAD), which wraps the descriptor's run() and
             counts the heap and lock calls made under it, from any library, on a long input (the input,
             full-scale noise, a tone just under Nyquist, silence, the input again): none past the warm-up (the
             first second, or the first run() if it is given more). For koe, also `realtime from the start`:
             none at all, the first blocks included (issue 13's bar; Rubber Band's LADSPA plugin makes one heap
             call in its first run() under sox). And `koe-lv2 realtime, controls moving`: this script as the
             host, moving every control (snap and vibrato on and off included) while it plays: none either.
  contract   lv2info and analyseplugin see the URI, label, port symbols, ranges, order and the latency port
             (lv2:reportsLatency); the LV2 presets carry `koe presets`' pitch and formant ratios.
For each koe plugin file:
  size       at most 16 MB (2^20 bytes each): the Swift runtime is linked in, Foundation must not be (it made
             them 56 MB).

One PASS or FAIL line per check with its figures; the last line reads `plugins: N passed, M failed`; exits 1
when a check fails.
"""

import ctypes
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyworld
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Harness"))
import measures  # noqa: E402
from harness import (CORPUS, REPOSITORY, Suite, cannot_run, check, missing_tools, option_parser,  # noqa: E402
                     run)

COUNTER_SOURCE = Path(__file__).resolve().parent / "call_counter.c"

SOX_BUFFER = 32768
PITCH = 1.2
F0_TOLERANCE = 0.02            # relative, shift
DELAY_TOLERANCE = 0.005        # s, unity (the bar)
GAIN_DB = -6.0
LEVEL_TOLERANCE = 1.5          # dB, unity
MIN_CORRELATION = 0.99         # latency: the reference and the output are the same signal
LATENCY_TOLERANCE = 1          # frames: one lv2apply block (sox's are 32768; the same signal lines up to the frame)
MIN_ENGINE_SNR = 150           # dB: koe's plugins and `koe convert --live` run one engine, so the same samples
RATIO_RANGE = (0.0625, 16.0)   # koe's pitch and formant ports: the settings table's (contract lv2 checks)
GAIN_RANGE = (-60.0, 60.0)     # koe's gain_db port: the settings table's gain
SNAP_RANGE = (0, 14)           # koe's snap port: 0 off, then 1 + the scale's index in SCALES
VIBRATO_RATE_RANGE = (0.0, 20.0)
BAD_VALUES = ("0", "-1", "nan", "1e9")
TRAILING_SILENCE = 1.0         # s after each input's speech
MAX_PLUGIN_MB = 16             # each plugin file, MB of 2^20 bytes

RUBBERBAND_LV2 = "http://breakfastquay.com/rdf/lv2-rubberband#mono"
RUBBERBAND_LADSPA = ("ladspa-rubberband.so", "rubberband-pitchshifter-mono")
# 3 semitones and 16 cents: 2^(3.16/12) = 1.2001; Rubber Band's LV2 cents port takes integers.
RUBBERBAND_SHIFT = {"cents": 16, "semitones": 3}


# --- hosts and contenders ------------------------------------------------------------------------------

@dataclass
class Contender:
    name: str
    is_koe: bool
    host: str                  # "lv2apply" or "sox"
    plugin: str                # LV2 URI, or LADSPA file
    label: str = ""            # LADSPA label
    port_order: list = field(default_factory=list)   # LADSPA input control ports, in order, with defaults

    @property
    def shared_object(self):
        """The file name of the plugin's code, as the call counter looks for it."""
        if self.host == "sox":
            return self.plugin
        return "koe.so" if self.is_koe else "lv2-rubberband.so"

    @property
    def compensates(self):
        return self.host == "sox"

    def command(self, source, output, controls):
        if self.host == "lv2apply":
            pairs = [part for symbol, value in controls.items() for part in ("-c", symbol, value)]
            return ["lv2apply", "-i", source, "-o", output, *pairs, self.plugin]
        values = [controls.get(symbol, default) for symbol, default in self.port_order]
        return ["sox", "--buffer", SOX_BUFFER, source, output, "ladspa", "-l", self.plugin, self.label, *values]

    def shift_controls(self):
        return {"pitch": PITCH} if self.is_koe else dict(RUBBERBAND_SHIFT)

    def unity_controls(self):
        return {"pitch": 1, "formant": 1, "gain_db": GAIN_DB} if self.is_koe else {"cents": 0, "semitones": 0}

    @property
    def unity_gain(self):
        return GAIN_DB if self.is_koe else 0.0


# koe's input control ports in port order, with their defaults: sox takes values in this order.
# The ports that carry a setting of the settings table, by port symbol.
SETTING_PORTS = {"pitch": "pitch", "formant": "formant", "gain_db": "gain", "pitch_range": "pitch_range",
                 "snap_strength": "snap_strength", "snap_speed": "snap_speed", "vibrato_rate": "vibrato_rate",
                 "vibrato_depth": "vibrato_depth"}
KOE_PORTS = [("pitch", 1), ("formant", 1), ("gain_db", 0), ("pitch_range", 1), ("whisper", 0), ("snap", 0),
             ("snap_key", 0), ("snap_strength", 1), ("snap_speed", 0), ("vibrato_rate", 0), ("vibrato_depth", 50),
             ("aim", 0)]
# What the `voice` check sets, and the flags that say the same to `koe convert --live`.
SCALES = ["chromatic", "major", "minor", "dorian", "phrygian", "lydian", "mixolydian", "locrian", "harmonic-minor",
          "melodic-minor", "major-pentatonic", "minor-pentatonic", "blues", "whole-tone"]
KEYS = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
VOICE_CONTROLS = [
    {"pitch": 1.2, "pitch_range": 0.6, "snap": 1 + SCALES.index("minor"), "snap_key": KEYS.index("A"),
     "snap_strength": 0.8, "snap_speed": 20, "vibrato_rate": 5.5, "vibrato_depth": 40},
    {"pitch": 1.2, "whisper": 1},
]
RUBBERBAND_PORTS = [("cents", 0), ("semitones", 0), ("octaves", 0), ("crispness", 3), ("formant", 0), ("wetdry", 0)]

CONTENDERS = [
    Contender("koe-lv2", True, "lv2apply", "urn:koe:voice"),
    Contender("koe-ladspa", True, "sox", "koe-ladspa.so", "koe_voice", KOE_PORTS),
    Contender("rubberband-lv2", False, "lv2apply", RUBBERBAND_LV2),
    Contender("rubberband-ladspa", False, "sox", RUBBERBAND_LADSPA[0], RUBBERBAND_LADSPA[1], RUBBERBAND_PORTS),
]


class Hosts:
    """Where the hosts find the plugins: an LV2 folder holding koe's bundle and Debian's, and a LADSPA path."""

    def __init__(self, root, plugins):
        lv2 = root / "lv2"
        lv2.mkdir()
        (lv2 / "koe.lv2").symlink_to(plugins.resolve() / "koe.lv2")
        self.environment = dict(os.environ, LV2_PATH=f"{lv2}:/usr/lib/lv2",
                                LADSPA_PATH=f"{plugins.resolve()}:/usr/lib/ladspa")
        self.ladspa_folders = [plugins.resolve(), Path("/usr/lib/ladspa")]

    def apply(self, contender, source, output, controls, preload=None):
        env = dict(self.environment)
        if preload:
            env.update(preload)
        run(contender.command(source, output, {key: str(value) for key, value in controls.items()}), env=env)
        samples, rate = soundfile.read(str(output), dtype="float32")
        return samples

    def latency_port(self, contender, rate):
        if contender.host == "lv2apply":
            return lv2_latency_port(contender.plugin, rate, self.environment)
        folder = next(folder for folder in self.ladspa_folders if (folder / contender.plugin).exists())
        return ladspa_latency_port(folder / contender.plugin, contender.label, rate)


# --- reading the latency port as a host does ---------------------------------------------------------
# lv2apply never shows it and sox only acts on it, so the test reads it itself: instantiate at the rate, connect
# every port (controls at their defaults), activate, one run() of a block of silence, read the port (sox reads
# it at the same moment).

PROBE_FRAMES = 512


class LV2Descriptor(ctypes.Structure):
    pass


LV2Descriptor._fields_ = [
    ("URI", ctypes.c_char_p),
    ("instantiate", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(LV2Descriptor), ctypes.c_double,
                                     ctypes.c_char_p, ctypes.c_void_p)),
    ("connect_port", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)),
    ("activate", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
    ("run", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32)),
    ("deactivate", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
    ("cleanup", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
    ("extension_data", ctypes.c_void_p),
]


def engine_snr(reference, aligned):
    """SNR in dB of `aligned` against `reference` over their common length: infinite when equal."""
    length = min(len(reference), len(aligned))
    reference = np.asarray(reference[:length], dtype=np.float64)
    error = np.sum((reference - np.asarray(aligned[:length], dtype=np.float64)) ** 2)
    return float("inf") if error == 0 else 10 * np.log10(np.sum(reference ** 2) / error)


def lv2_ports(uri, env):
    """lv2info's view of a plugin: its binary, bundle, and ports as (symbol, classes, default, minimum, maximum)."""
    info = run(["lv2info", uri], env=env)
    binary = re.search(r"Binary:\s+file://(\S+)", info).group(1)
    bundle = re.search(r"Bundle:\s+file://(\S+)", info).group(1)
    ports = []
    for block in re.split(r"\n\tPort \d+:\n", info)[1:]:
        def number(name):
            found = re.search(rf"{name}:\s+(\S+)", block)
            return float(found.group(1)) if found else None
        ports.append((re.search(r"Symbol:\s+(\S+)", block).group(1), set(re.findall(r"(?:lv2core|port-props)#(\w+)", block)),
                      number("Default"), number("Minimum"), number("Maximum")))
    return binary, bundle, ports, info


def lv2_latency_port(uri, rate, env):
    binary, bundle, ports, _ = lv2_ports(uri, env)
    library = ctypes.CDLL(binary)
    library.lv2_descriptor.restype = ctypes.POINTER(LV2Descriptor)
    library.lv2_descriptor.argtypes = [ctypes.c_uint32]
    descriptor = next(library.lv2_descriptor(index) for index in range(64)
                      if library.lv2_descriptor(index) and library.lv2_descriptor(index).contents.URI.decode() == uri)
    no_features = (ctypes.c_void_p * 1)(None)
    instance = descriptor.contents.instantiate(descriptor, float(rate), bundle.encode(),
                                               ctypes.cast(no_features, ctypes.c_void_p))
    check(instance, f"{uri} would not instantiate at {rate} Hz")
    buffers = []
    for index, (symbol, classes, default, _, _) in enumerate(ports):
        if "AudioPort" in classes:
            buffer = np.zeros(PROBE_FRAMES, dtype=np.float32)
        else:
            buffer = np.array([default or 0.0], dtype=np.float32)
        buffers.append((symbol, buffer))
        descriptor.contents.connect_port(instance, index, buffer.ctypes.data)
    descriptor.contents.activate(instance)
    descriptor.contents.run(instance, PROBE_FRAMES)
    latency = float(dict(buffers)["latency"][0])
    descriptor.contents.cleanup(instance)
    return latency


class LADSPADescriptor(ctypes.Structure):
    pass


_handle = ctypes.c_void_p
LADSPADescriptor._fields_ = [
    ("UniqueID", ctypes.c_ulong),
    ("Label", ctypes.c_char_p),
    ("Properties", ctypes.c_int),
    ("Name", ctypes.c_char_p),
    ("Maker", ctypes.c_char_p),
    ("Copyright", ctypes.c_char_p),
    ("PortCount", ctypes.c_ulong),
    ("PortDescriptors", ctypes.POINTER(ctypes.c_int)),
    ("PortNames", ctypes.POINTER(ctypes.c_char_p)),
    ("PortRangeHints", ctypes.c_void_p),
    ("ImplementationData", ctypes.c_void_p),
    ("instantiate", ctypes.CFUNCTYPE(_handle, ctypes.POINTER(LADSPADescriptor), ctypes.c_ulong)),
    ("connect_port", ctypes.CFUNCTYPE(None, _handle, ctypes.c_ulong, ctypes.c_void_p)),
    ("activate", ctypes.CFUNCTYPE(None, _handle)),
    ("run", ctypes.CFUNCTYPE(None, _handle, ctypes.c_ulong)),
    ("run_adding", ctypes.c_void_p),
    ("set_run_adding_gain", ctypes.c_void_p),
    ("deactivate", ctypes.CFUNCTYPE(None, _handle)),
    ("cleanup", ctypes.CFUNCTYPE(None, _handle)),
]
LADSPA_PORT_AUDIO = 0x8


def ladspa_latency_port(path, label, rate):
    library = ctypes.CDLL(str(path))
    library.ladspa_descriptor.restype = ctypes.POINTER(LADSPADescriptor)
    library.ladspa_descriptor.argtypes = [ctypes.c_ulong]
    descriptor = next(library.ladspa_descriptor(index) for index in range(64)
                      if library.ladspa_descriptor(index)
                      and library.ladspa_descriptor(index).contents.Label.decode() == label)
    instance = descriptor.contents.instantiate(descriptor, rate)
    check(instance, f"{label} would not instantiate at {rate} Hz")
    buffers = {}
    for index in range(descriptor.contents.PortCount):
        name = descriptor.contents.PortNames[index].decode()
        audio = descriptor.contents.PortDescriptors[index] & LADSPA_PORT_AUDIO
        buffers[name] = np.zeros(PROBE_FRAMES if audio else 1, dtype=np.float32)
        descriptor.contents.connect_port(instance, index, buffers[name].ctypes.data)
    # The controls at the values the tests give sox as defaults.
    for name, value in (KOE_PORTS if label == "koe_voice" else []):
        buffers[name][0] = value
    descriptor.contents.activate(instance)
    descriptor.contents.run(instance, PROBE_FRAMES)
    latency = float(buffers["latency"][0])
    descriptor.contents.cleanup(instance)
    return latency


# --- the checks --------------------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    path: Path
    rate: int

    @property
    def label(self):
        return f"{self.name}@{self.rate // 1000}k"


def make_inputs(root):
    sources = [(path, soundfile.info(str(path)).samplerate) for path in sorted((REPOSITORY / "samples").glob("*.wav"))]
    if CORPUS.is_dir():
        sources += [(path, rate) for path in sorted(CORPUS.glob("*.wav")) for rate in (16000, 48000)]
    else:
        print(f"plugins: {CORPUS} is absent: samples/ only")
    cases = []
    for source, rate in sources:
        path = root / "inputs" / f"{source.stem}-{rate}.wav"
        path.parent.mkdir(exist_ok=True)
        run(["sox", source, "-r", rate, "-e", "floating-point", "-b", 32, path, "pad", 0, TRAILING_SILENCE])
        cases.append(Case(source.stem, path, rate))
    return cases


class Session:
    def __init__(self, root, hosts, koe):
        self.root = root
        self.hosts = hosts
        self.koe = koe
        self.ports = {}
        self.renders = {}
        self.world_figures = {}
        self.figures = []
        self.counted = {}

    def output(self, *parts):
        return self.root / "outputs" / ("-".join(str(part) for part in parts) + ".wav")

    def render(self, contender, case, kind):
        """The contender's output for the case at its `shift` or `unity` settings, made once."""
        key = (contender.name, case.label, kind)
        if key not in self.renders:
            controls = contender.shift_controls() if kind == "shift" else contender.unity_controls()
            self.renders[key] = self.hosts.apply(contender, case.path, self.output(*key), controls)
        return self.renders[key]

    def world_alone(self, case, source):
        if case.label not in self.world_figures:
            self.world_figures[case.label] = world_alone(source, case.rate)
        return self.world_figures[case.label]

    def latency(self, contender, rate):
        key = (contender.name, rate)
        if key not in self.ports:
            self.ports[key] = self.hosts.latency_port(contender, rate)
        return self.ports[key]

    def expected_delay(self, contender, rate):
        """Where the output should line up with the input: the reported latency, or 0 where the host removes it."""
        return 0 if contender.compensates else int(self.latency(contender, rate))

    def shift(self, contender, case, source):
        output = self.render(contender, case, "shift")
        check(len(output) == len(source), f"{len(output)} frames out for {len(source)} in")
        check(soundfile.info(str(self.output(contender.name, case.label, "shift"))).subtype == "FLOAT",
              "the host did not write float samples: finiteness cannot be seen")
        check(np.isfinite(output).all(), f"{np.count_nonzero(~np.isfinite(output))} non-finite samples")
        ratio, frames = measures.f0_ratio(source, output, case.rate, self.expected_delay(contender, case.rate))
        self.figures.append((contender.name, case.label, "ratio", ratio))
        check(frames >= measures.MIN_VOICED_FRAMES, f"only {frames} frames voiced in both: nothing to measure")
        check(abs(ratio / PITCH - 1) <= F0_TOLERANCE, f"F0 ratio {ratio:.4f} over {frames} frames, not within 2 % of {PITCH}")
        return f"F0 ratio {ratio:.4f} ({frames} frames), length exact, finite"

    def exact_latency(self, contender, case, source):
        port = self.latency(contender, case.rate)
        if contender.is_koe:
            reference_path = self.output("koe-convert", case.label)
            # A control port is a float: the plugin runs at 1.2 as a float holds it, and so does the reference.
            host_pitch = repr(float(np.float32(PITCH)))
            run([self.koe, "convert", case.path, reference_path, "--live", "--pitch", host_pitch, "--quiet"])
            reference, _ = soundfile.read(str(reference_path), dtype="float32")
            signal, against = self.render(contender, case, "shift"), "koe convert --live --pitch 1.2"
        else:
            reference, signal, against = source, self.render(contender, case, "unity"), "the input (0 semitones)"
        measured, correlation = measures.lag(reference, signal, case.rate)
        expected = self.expected_delay(contender, case.rate)
        self.figures.append((contender.name, case.label, "latency", (port, measured)))
        summary = (f"port {port:.0f} frames ({1000 * port / case.rate:.1f} ms), measured delay {measured} against "
                   f"{against} (r = {correlation:.3f})" + (", host compensates: expect 0" if contender.compensates else ""))
        check(correlation >= MIN_CORRELATION, f"{summary}: no match")
        check(abs(measured - expected) <= LATENCY_TOLERANCE, f"{summary}: off by {measured - expected} frames")
        if contender.is_koe:
            snr = engine_snr(reference, signal[measured:])
            summary += f", {'bit for bit' if snr == float('inf') else f'SNR {snr:.1f} dB'} against it"
            # sox carries samples between effects as 32-bit integers (about 130 dB): only lv2apply, which hands the
            # plugin's floats through untouched, is held to the bar; sox's figure is printed.
            if contender.host == "lv2apply":
                check(snr >= MIN_ENGINE_SNR, f"{summary}: the plugin's samples are not the CLI's")
        return summary

    def unity(self, contender, case, source):
        output = self.render(contender, case, "unity")
        expected = self.expected_delay(contender, case.rate)
        measured = measures.envelope_delay(source, output, case.rate, case.rate)
        level = measures.level_db(source, output, measured)
        off_ms = 1000 * (measured - expected) / case.rate
        self.figures.append((contender.name, case.label, "unity", (off_ms, level)))
        summary = f"delay {'0' if contender.compensates else 'port'} {off_ms:+.1f} ms, level {level:+.2f} dB"
        if contender.is_koe:
            world_delay, world_level = self.world_alone(case, source)
            summary += f" (WORLD alone: {world_delay:+.1f} ms, {world_level:+.2f} dB)"
        check(abs(off_ms) <= 1000 * DELAY_TOLERANCE, f"{summary}: delay not within 5 ms of the port")
        check(abs(level - contender.unity_gain) <= LEVEL_TOLERANCE,
              f"{summary}: level not within {contender.unity_gain:+.0f} +- {LEVEL_TOLERANCE} dB")
        return summary

    def controls(self, contender, case):
        """Bad control values give the output of the value clamped to the port's range (NaN: the default)."""
        defaults = dict(KOE_PORTS)
        ranges = {"pitch": RATIO_RANGE, "formant": RATIO_RANGE, "gain_db": GAIN_RANGE, "snap": SNAP_RANGE,
                  "vibrato_rate": VIBRATO_RATE_RANGE}
        references = {}
        checked = 0
        for symbol, (low, high) in ranges.items():
            for text in BAD_VALUES:
                value = float(text)
                clamped = defaults[symbol] if np.isnan(value) else min(max(value, low), high)
                if clamped not in references:
                    references[clamped] = self.hosts.apply(
                        contender, case.path, self.output(contender.name, symbol, "clamped", clamped), {symbol: clamped})
                output = self.hosts.apply(contender, case.path, self.output(contender.name, symbol, text), {symbol: text})
                check(np.isfinite(output).all(), f"{symbol} {text}: non-finite samples")
                check(len(output) == len(references[clamped]), f"{symbol} {text}: {len(output)} frames")
                check(np.array_equal(output, references[clamped]), f"{symbol} {text}: not the output of {symbol} {clamped}")
                checked += 1
            references.clear()
        return f"{checked} runs ({', '.join(BAD_VALUES)} on {', '.join(ranges)}): each the clamped value's output"

    def voice(self, contender, case):
        """The voice ports beyond pitch give what `koe convert --live` gives with the same settings as flags."""
        summaries = []
        for index, controls in enumerate(VOICE_CONTROLS):
            # A control port is a float: the CLI is given each value as the port holds it.
            held = {symbol: float(np.float32(value)) for symbol, value in controls.items()}
            # Through a pipe: a stream, like the plugin's, whose pitch range works around its running median (a file
            # conversion takes the whole file's median first).
            source, _ = soundfile.read(str(case.path), dtype="float32")
            reference = np.frombuffer(subprocess.run(
                [self.koe, "convert", "-", "-", "--type", "raw", "--rate", str(case.rate), "--encoding", "float",
                 "--bits", "32", "--channels", "1", "--live", "--quiet", *voice_flags(held)],
                input=source.tobytes(), capture_output=True, check=True).stdout, dtype=np.float32)
            output = self.hosts.apply(contender, case.path, self.output(contender.name, "voice", str(index)), held)
            check(np.isfinite(output).all() and len(output) == len(reference), f"{controls}: {len(output)} frames")
            delay = self.expected_delay(contender, case.rate)
            snr = engine_snr(reference, output[delay:])
            summaries.append("bit for bit" if snr == float("inf") else f"SNR {snr:.1f} dB")
            if contender.host == "lv2apply":
                check(snr >= MIN_ENGINE_SNR, f"{' '.join(voice_flags(held))}: {summaries[-1]} against koe convert --live")
        return f"{'; '.join(summaries)} against koe convert --live with the same flags ({len(VOICE_CONTROLS)} settings)"

    def long_input(self, case):
        """The input, then what makes DIO's bands busiest and quietest (full-scale white noise, a tone just under
        Nyquist, digital silence), then the input again: no signal may make run() allocate."""
        path = self.root / "inputs" / f"{case.path.stem}-long.wav"
        if not path.exists():
            rate = soundfile.info(str(case.path)).samplerate
            generator = np.random.default_rng(13)
            seconds = np.arange(2 * rate) / rate
            samples = soundfile.read(str(case.path), dtype="float64")[0]
            soundfile.write(str(path), np.concatenate([
                samples, generator.uniform(-1, 1, 2 * rate), 0.5 * np.sin(2 * np.pi * (0.49 * rate) * seconds),
                np.zeros(rate), samples]), rate, subtype="PCM_16")
        return path

    def count_calls(self, contender, case, counter):
        """The host on the long input under the call counter: what run() allocates and locks, and until when."""
        long_input = self.long_input(case)
        report = self.root / f"counts-{contender.name}"
        self.hosts.apply(contender, long_input, self.output(contender.name, "counted"), contender.shift_controls(),
                         preload={"LD_PRELOAD": str(counter), "COUNT_OBJECT": contender.shared_object,
                                  "COUNT_OUTPUT": str(report)})
        counts = read_counts(report, contender.shared_object)
        rate = soundfile.info(str(long_input)).samplerate
        return counts, rate

    def warm_realtime(self, contender, case, counter):
        """Past the warm-up (the first second, or the first run() if it is given more), run() makes no heap or
        lock call, whatever the signal."""
        counts, rate = self.realtime_counts(contender, case, counter)
        warm_up = max(rate, counts["first_frames"])
        calls = (f"{counts['heap']} heap and {counts['lock']} lock calls within run(), the last in the call ending "
                 f"at {counts['last_frame'] / rate:.2f} s" if counts["heap"] or counts["lock"] else "no heap or lock call within run()")
        summary = (f"{counts['runs']} run() calls over {counts['frames'] / rate:.1f} s (noise, a tone and silence "
                   f"included): {calls}; {counts['outside']} heap calls from the plugin outside run()")
        check(counts["last_frame"] <= warm_up,
              f"{summary}: run() allocates or locks after its warm-up ({warm_up / rate:.2f} s)")
        return summary

    def cold_realtime(self, contender, case, counter):
        """run() makes no heap or lock call at all, the first blocks included."""
        counts, rate = self.realtime_counts(contender, case, counter)
        summary = f"{counts['heap']} heap and {counts['lock']} lock calls within run(), the first blocks included"
        check(counts["heap"] == 0 and counts["lock"] == 0, summary)
        return summary

    def moving_realtime(self, case, counter, plugins):
        """koe's LV2 plugin run by this script as a host that moves pitch, formant, gain and the aim while it plays
        (`play_moving_controls`): no heap or lock call within run()."""
        long_input = self.long_input(case)
        report = self.root / "counts-moving"
        run([sys.executable, Path(__file__).resolve(), "--plugins", plugins, "--play-moving-controls", long_input],
            env=dict(os.environ, LD_PRELOAD=str(counter), COUNT_OBJECT="koe.so", COUNT_OUTPUT=str(report)))
        counts = read_counts(report, "koe.so")
        summary = (f"{counts['runs']} run() calls of {MOVING_BLOCK} frames, {len(MOVING_CONTROLS)} control changes: "
                   f"{counts['heap']} heap and {counts['lock']} lock calls within run()")
        check(counts["heap"] == 0 and counts["lock"] == 0, summary)
        return summary

    def realtime_counts(self, contender, case, counter):
        """The counts of one counted host run per contender, made once."""
        if contender.name not in self.counted:
            self.counted[contender.name] = self.count_calls(contender, case, counter)
        return self.counted[contender.name]


def voice_flags(controls):
    """`koe convert` flags that say what the voice ports `controls` say."""
    flags = ["--preset", "whisper"] if controls.get("whisper") else []
    for symbol, flag in (("pitch", "--pitch"), ("formant", "--formant"), ("gain_db", "--gain"),
                         ("pitch_range", "--pitch-range")):
        if symbol in controls:
            flags += [flag, repr(controls[symbol])]
    if controls.get("snap"):
        scale = SCALES[int(controls["snap"]) - 1]
        flags += ["--snap", scale if scale == "chromatic" else f"{KEYS[int(controls.get('snap_key', 0))]}:{scale}",
                  "--snap-strength", repr(controls.get("snap_strength", 1.0)),
                  "--snap-speed", repr(controls.get("snap_speed", 0.0))]
    if controls.get("vibrato_rate"):
        flags += ["--vibrato", f"{controls['vibrato_rate']!r}:{controls.get('vibrato_depth', 50.0)!r}"]
    return flags


def read_counts(report, shared_object):
    """What call_counter.c wrote, by name; fails when it saw no run() of the plugin."""
    check(report.exists(), "the call counter wrote nothing: was it preloaded?")
    counts = {name: int(value) for name, value in (line.split() for line in report.read_text().splitlines())}
    check(counts["runs"] > 0, f"the counter saw no run() of {shared_object}: was it loaded by dlsym?")
    return counts


# What `play_moving_controls` sets, and when (seconds): out of and back to identity, snap and vibrato on and off.
MOVING_CONTROLS = [(0, {"pitch": 1.2}), (1.0, {"pitch": 1.5, "formant": 1.3, "gain_db": -6, "pitch_range": 0.5}),
                   (1.5, {"pitch": 0.8, "formant": 0.9, "gain_db": 3, "snap": 3, "snap_key": 9, "vibrato_rate": 6}),
                   (2.0, {"pitch": 1.0, "formant": 1.0, "gain_db": 0, "snap_strength": 0.5, "snap_speed": 50,
                          "vibrato_depth": 100, "whisper": 1}),
                   (2.5, {"pitch": 2.0, "formant": 1.2, "gain_db": -3, "snap": 0, "vibrato_rate": 0, "whisper": 0}),
                   (3.0, {"pitch": 1.0, "pitch_range": 1.0, "snap": 14, "snap_key": 11}),
                   (3.5, {"snap": 0, "aim": 3}), (6.0, {"aim": 1}), (9.0, {"aim": 0})]
# koe.lv2's control ports by index (the latency output is port 5).
LV2_CONTROL_INDEX = {"pitch": 2, "formant": 3, "gain_db": 4, "latency": 5, "pitch_range": 6, "whisper": 7, "snap": 8,
                     "snap_key": 9, "snap_strength": 10, "snap_speed": 11, "vibrato_rate": 12, "vibrato_depth": 13,
                     "aim": 14}
MOVING_BLOCK = 256


def play_moving_controls(plugins, source):
    """A host of koe's LV2 plugin, in this process: the input through it in blocks of MOVING_BLOCK frames, the
    controls moving as MOVING_CONTROLS says."""
    bundle = plugins.resolve() / "koe.lv2"
    library = ctypes.CDLL(str(bundle / "koe.so"))
    library.lv2_descriptor.restype = ctypes.POINTER(LV2Descriptor)
    library.lv2_descriptor.argtypes = [ctypes.c_uint32]
    descriptor = library.lv2_descriptor(0)
    samples, rate = soundfile.read(str(source), dtype="float32")
    no_features = (ctypes.c_void_p * 1)(None)
    instance = descriptor.contents.instantiate(descriptor, float(rate), f"{bundle}/".encode(),
                                               ctypes.cast(no_features, ctypes.c_void_p))
    check(instance, "koe.lv2 would not instantiate")
    ports = [np.zeros(MOVING_BLOCK, np.float32), np.zeros(MOVING_BLOCK, np.float32)]
    defaults = dict(KOE_PORTS)
    controls = {symbol: np.full(1, defaults.get(symbol, 0), np.float32) for symbol in LV2_CONTROL_INDEX}
    for index, buffer in enumerate(ports):
        descriptor.contents.connect_port(instance, index, buffer.ctypes.data)
    for symbol, buffer in controls.items():
        descriptor.contents.connect_port(instance, LV2_CONTROL_INDEX[symbol], buffer.ctypes.data)
    descriptor.contents.activate(instance)
    changes = {int(seconds * rate) // MOVING_BLOCK: values for seconds, values in MOVING_CONTROLS}
    for block in range(len(samples) // MOVING_BLOCK):
        for symbol, value in changes.get(block, {}).items():
            controls[symbol][0] = value
        ports[0][:] = samples[block * MOVING_BLOCK:(block + 1) * MOVING_BLOCK]
        descriptor.contents.run(instance, MOVING_BLOCK)
    descriptor.contents.cleanup(instance)


def world_alone(source, rate):
    """pyworld's analysis and synthesis of the input, measured as `unity` measures a plugin: its delay in ms and
    its level in dB against the input. What the vocoder does without koe, and without any latency."""
    samples = source.astype(np.float64)
    f0, times = pyworld.dio(samples, rate)
    f0 = pyworld.stonemask(samples, f0, times, rate)
    resynthesis = pyworld.synthesize(f0, pyworld.cheaptrick(samples, f0, times, rate),
                                     pyworld.d4c(samples, f0, times, rate), rate)[:len(samples)]
    delay = measures.envelope_delay(samples, resynthesis, rate, rate)
    return 1000 * delay / rate, measures.level_db(samples, resynthesis, delay)


def contract_lv2(hosts, koe):
    _, _, ports, info = lv2_ports("urn:koe:voice", hosts.environment)
    by_symbol = {symbol: (classes, default, low, high) for symbol, classes, default, low, high in ports}
    symbols = ["in", "out", "pitch", "formant", "gain_db", "latency", "pitch_range", "whisper", "snap", "snap_key",
               "snap_strength", "snap_speed", "vibrato_rate", "vibrato_depth", "aim"]
    check([symbol for symbol, *_ in ports] == symbols, f"ports {[symbol for symbol, *_ in ports]}")
    # The ports that are settings span the settings table's ranges, with its defaults, logarithmic where it is;
    # the others (whisper, snap, snap_key, aim) are the plugins' own encodings of a flag and a text (aim: the
    # preset setting's voice presets, whose targets the ratios aim at).
    table = settings_table(koe)
    # The voice presets in `koe presets`' order (its JSON's keys are sorted): the lines that name a target.
    voices = [line.split()[0] for line in run([koe, "presets"]).splitlines() if " target " in line]
    expected = {"whisper": (0.0, 0.0, 1.0), "snap": (0.0, 0.0, 14.0), "snap_key": (0.0, 0.0, 11.0),
                "aim": (0.0, 0.0, float(len(voices)))}
    for symbol, name in SETTING_PORTS.items():
        setting = table[name]
        expected[symbol] = (setting["default"], setting["minimum"], setting["maximum"])
        check(("logarithmic" in by_symbol[symbol][0]) == setting["logarithmic"],
              f"{symbol}: logarithmic {'logarithmic' in by_symbol[symbol][0]}, the setting {name}'s {setting['logarithmic']}")
    for symbol, values in expected.items():
        check(by_symbol[symbol][1:] == values,
              f"{symbol}: default, minimum, maximum {by_symbol[symbol][1:]}, the settings table's {values}")
    check(dict(KOE_PORTS) == {symbol: values[0] for symbol, values in expected.items()}, "KOE_PORTS is not the ports' defaults")
    check(all({"integer", "enumeration"} <= by_symbol[symbol][0] for symbol in ("snap", "snap_key", "aim")),
          "snap, snap_key and aim are not integer enumerations")
    scale_points = re.findall(r'(\d+) = "([^"]+)"', info)
    for value, label in enumerate(["off"] + SCALES):
        check((str(value), label.replace("-", " ")) in scale_points, f"snap has no scale point {value} = {label}")
    for value, label in enumerate(KEYS):
        check((str(value), label) in scale_points, f"snap_key has no scale point {value} = {label}")
    for value, label in enumerate(voices, start=1):
        check((str(value), label) in scale_points, f"aim has no scale point {value} = {label} (koe presets' order)")
    check({"OutputPort", "ControlPort", "reportsLatency"} <= by_symbol["latency"][0], "latency: not a reportsLatency output")
    check(re.search(r"Has latency:\s+yes, reported by port 5", info), "lv2info does not see the latency port")
    check("lv2core#hardRTCapable" in info, "not declared hard real-time capable")
    presets = re.findall(r'rdfs:label "(\w+)[^"]*" ;\s*lv2:port \[ lv2:symbol "pitch" ; pset:value ([\d.]+) \] , '
                         r'\[ lv2:symbol "formant" ; pset:value ([\d.]+) \]',
                         (REPOSITORY / "Sources/KoePlugins/lv2/presets.ttl").read_text())
    listed = {line.split()[0]: line for line in run([koe, "presets"]).splitlines()}
    check(len(presets) >= 5, f"{len(presets)} presets read from presets.ttl")
    for name, pitch, formant in presets:
        check(f"--pitch {pitch} --formant {formant}" in listed.get(name, ""),
              f"preset {name} ({pitch}, {formant}) is not koe's: {listed.get(name)}")
    return (f"ports {', '.join(symbols)} (latency reportsLatency; snap, snap_key and aim enumerations; ranges and defaults "
            f"the settings table's); hardRTCapable; "
            f"presets {', '.join(p[0] for p in presets)} agree")


def plugin_size(path):
    size = path.stat().st_size
    summary = f"{path.name} {size / 2**20:.1f} MB ({size} bytes)"
    check(size <= MAX_PLUGIN_MB * 2**20, f"{summary}, above {MAX_PLUGIN_MB} MB")
    return f"{summary}, at most {MAX_PLUGIN_MB} MB"


def contract_ladspa(plugins, koe):
    text = run(["analyseplugin", plugins.resolve() / "koe-ladspa.so"])
    check('Plugin Label: "koe_voice"' in text, "no label koe_voice")
    ports = re.findall(r'"([^"]+)" (input|output), (control|audio)', text)
    names = ["pitch", "formant", "gain_db", "latency", "Input", "Output"] + [symbol for symbol, _ in KOE_PORTS[3:]]
    check([name for name, *_ in ports] == names, f"ports {ports}")
    defaults = {name: float(value) for name, value in re.findall(r'"(\w+)" input, control, [^\n]*default ([-\d.]+)', text)}
    # LADSPA's default hints cannot say vibrato_depth's 50 within 0 to 1200 (koe_ladspa.c): they say 100.
    check(defaults == {name: float(value) for name, value in KOE_PORTS} | {"vibrato_depth": 100.0}, f"defaults {defaults}")
    table = settings_table(koe)
    for symbol, name in SETTING_PORTS.items():
        found = re.search(rf'"{symbol}" input, control, ([-\d.e]+) to ([-\d.e]+)(, [^\n]*)?', text)
        check(found, f"{symbol}: analyseplugin shows no range")
        setting = table[name]
        check((float(found.group(1)), float(found.group(2))) == (setting["minimum"], setting["maximum"]),
              f"{symbol}: range {found.group(1)} to {found.group(2)}, the settings table's {setting['minimum']} to {setting['maximum']}")
        check(("logarithmic" in (found.group(3) or "")) == setting["logarithmic"], f"{symbol}: logarithmic is not the table's")
    check(ports[3][1:] == ("output", "control"), "latency is not a control output")
    check("Environment: Normal or Hard Real-Time" in text, "not declared hard real-time capable")
    return (f"label koe_voice; ports {', '.join(names)} (latency a control output), ranges the settings table's, "
            f"defaults as koe.lv2's; hard real-time")


def settings_table(koe):
    """`koe settings --json`: the settings table every front end and the plugins' ports follow."""
    return json.loads(run([koe, "settings", "--json"]))


def main():
    parser = option_parser(__doc__)
    parser.add_argument("--plugins", type=Path, default=REPOSITORY / ".build/plugins")
    parser.add_argument("--play-moving-controls", type=Path, metavar="WAV",
                        help="only host koe.lv2 on WAV, moving its controls (the moving-controls check runs this)")
    arguments = parser.parse_args()
    if arguments.play_moving_controls:
        play_moving_controls(arguments.plugins, arguments.play_moving_controls)
        return 0

    missing = missing_tools(("lv2apply", "lv2info", "sox", "analyseplugin", "cc"))
    missing += [str(path) for path in (arguments.plugins / "koe.lv2/koe.so", arguments.plugins / "koe-ladspa.so",
                                       arguments.koe, Path("/usr/lib/lv2/rubberband.lv2"),
                                       Path("/usr/lib/ladspa/ladspa-rubberband.so")) if not path.exists()]
    if missing:
        return cannot_run("plugins", missing, "make test-plugins")

    suite = Suite("plugins", arguments.keep, 42)
    root = suite.root
    (root / "outputs").mkdir()
    with suite.running():
        counter = root / "call_counter.so"
        run(["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o", counter, COUNTER_SOURCE, "-ldl"])
        hosts = Hosts(root, arguments.plugins)
        session = Session(root, hosts, arguments.koe)
        suite.attempt("contract lv2", lambda: contract_lv2(hosts, arguments.koe))
        suite.attempt("contract ladspa", lambda: contract_ladspa(arguments.plugins, arguments.koe))
        for plugin in (arguments.plugins / "koe.lv2/koe.so", arguments.plugins / "koe-ladspa.so"):
            suite.attempt(f"size {plugin.name}", lambda: plugin_size(plugin))
        cases = make_inputs(root)
        print(f"plugins: {len(cases)} inputs, {sum(soundfile.info(str(c.path)).duration for c in cases):.0f} s of "
              f"speech, in {root}")
        for case in cases:
            source, _ = soundfile.read(str(case.path), dtype="float32")
            for contender in CONTENDERS:
                suite.attempt(f"{contender.name} {case.label} shift", lambda: session.shift(contender, case, source))
                suite.attempt(f"{contender.name} {case.label} latency",
                              lambda: session.exact_latency(contender, case, source))
                suite.attempt(f"{contender.name} {case.label} unity", lambda: session.unity(contender, case, source))
        short_case = next(case for case in cases if case.rate == 16000)
        for contender in CONTENDERS:
            if contender.is_koe:
                suite.attempt(f"{contender.name} controls", lambda: session.controls(contender, short_case))
                suite.attempt(f"{contender.name} voice", lambda: session.voice(contender, short_case))
            suite.attempt(f"{contender.name} realtime", lambda: session.warm_realtime(contender, short_case, counter))
            if contender.is_koe:
                suite.attempt(f"{contender.name} realtime from the start",
                              lambda: session.cold_realtime(contender, short_case, counter))
        suite.attempt("koe-lv2 realtime, controls moving",
                      lambda: session.moving_realtime(short_case, counter, arguments.plugins))

    return suite.finish("the inputs, the hosts' outputs, the call counts")


if __name__ == "__main__":
    sys.exit(main())
