#!/usr/bin/env python3
"""The bars of issue 14 (pitch curves, F0 files, pitch correction, vibrato, the output limiter), measured on the
koe command line with tools independent of koe.

F0 is Praat's (parselmouth `to_pitch`, autocorrelation, 5 ms steps). On speech it is tracked in the speaker's
range found in two passes (De Looze and Hirst: 50-800 Hz, then 0.72 x the 35th percentile to 1.9 x the 65th),
widened by the largest ratio koe applies; on the synthetic vowels in a fixed 60-700 Hz.

Speech: samples/*.wav as they are and, when present, the shared corpus (../shared/corpus) resampled to 16 kHz
(sox `rate -v`; 16-bit, undithered), as bench/quality.py takes it. The
synthetic vowels are a pulse train through three formant resonators (700, 1220, 2600 Hz, bandwidth 80 Hz)
at 48 kHz, peak 0.5, written as 16-bit WAV.

Bars:
 (a) --pitch-curve gliding 1.0 at 0 s to 1.5 at the end of each speech file: over frames voiced in input and
     output, the median of |(F0 out / F0 in) / curve(t) - 1| <= 2 %, on every file.
 (b) --f0-file of 200 Hz on the frames `koe analyze` calls voiced (0 elsewhere): median output F0 within
     2 % of 200 Hz, on every file.
 (c) --snap chromatic --snap-strength 1 on a vowel gliding 150 -> 300 Hz over 4 s (exponentially):
     >= 85 % of voiced output frames within 20 cents of a semitone of A4 = 440 Hz. The input's own share
     is printed beside it (a glide spends 40 % of its time within 20 cents of a note).
 (d) --vibrato 5.5:50 on a steady 150 Hz vowel of 4 s: a sinusoid fitted by least squares to the output's F0
     in cents (rate searched over 2-12 Hz in 0.001 Hz steps, frames of the middle 3 s) has a rate within
     5 % of 5.5 Hz and an amplitude (peak deviation) within 20 % of 50 cents.
 (e) a 150 Hz sine at -0.5 dBFS, 3 s at 48 kHz, 16-bit, with --pitch 1.2: clipped_samples of --json is 0;
     with --no-limit the count is printed (the issue's 76,600 of 144,000).
 (f) every speech file with --pitch 1.2 --formant 1.1, with and without --no-limit: where the output without
     the limiter has headroom (no sample clipped: its --json clipped_samples is 0), the two output files are
     identical byte for byte. A file whose output clips without the limiter is printed with the SNR between
     the two and left out of the bar: the limiter is meant to change it.

Usage: python3 bench/curves.py [--koe .build/release/koe] [--corpus DIR]
Prints one line per file and bar, then PASS/FAIL per bar; exit status 1 if a bar fails.
"""

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from common import REPO, corpus_parser, ensure_debian_packages, ensure_python_packages, parse_with_koe

PYTHON_PACKAGES = [("numpy", "numpy"), ("soundfile", "soundfile"), ("parselmouth", "praat-parselmouth")]
DEBIAN_PACKAGES = [("sox", "sox")]
ensure_python_packages(PYTHON_PACKAGES)
ensure_debian_packages(DEBIAN_PACKAGES)

import numpy  # noqa: E402
import parselmouth  # noqa: E402
import soundfile  # noqa: E402

TIME_STEP = 0.005
CURVE_END_RATIO = 1.5
VOWEL_RATE = 48000
A4 = 440.0


def praat_pitch(samples, rate, floor, ceiling):
    """Praat's F0 every 5 ms: (frame times, F0 with 0 where unvoiced)."""
    pitch = parselmouth.Sound(samples, sampling_frequency=rate).to_pitch(
        time_step=TIME_STEP, pitch_floor=floor, pitch_ceiling=ceiling)
    return pitch.xs(), pitch.selected_array["frequency"]


def speaker_range(samples, rate):
    """Praat pitch floor and ceiling for this speaker, in two passes (De Looze and Hirst)."""
    _, f0 = praat_pitch(samples, rate, 50, 800)
    voiced = f0[f0 > 0]
    return 0.72 * numpy.percentile(voiced, 35), 1.9 * numpy.percentile(voiced, 65)


def koe(binary, *arguments):
    """Runs koe; returns its --json statistics when asked for, else None. Exits on failure."""
    result = subprocess.run([str(binary), *map(str, arguments)], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"koe {' '.join(map(str, arguments))} failed: {result.stderr.strip()}")
    if "--json" in arguments:
        return json.loads(result.stderr.strip().splitlines()[-1])
    return None


def vowel(f0_at_time, seconds, rate=VOWEL_RATE):
    """A pulse train whose frequency follows `f0_at_time` (an array of one value a sample) through formant
    resonators, peak 0.5."""
    count = int(seconds * rate)
    phase = numpy.cumsum(f0_at_time(numpy.arange(count) / rate) / rate)
    pulses = numpy.zeros(count)
    pulses[numpy.flatnonzero(numpy.diff(numpy.floor(phase), prepend=0) > 0)] = 1
    signal = pulses
    for formant in (700, 1220, 2600):
        radius = math.exp(-math.pi * 80 / rate)
        a1, a2 = 2 * radius * math.cos(2 * math.pi * formant / rate), -radius * radius
        output = numpy.zeros(count)
        y1 = y2 = 0.0
        for index, sample in enumerate(signal):
            y = sample + a1 * y1 + a2 * y2
            output[index] = y
            y2, y1 = y1, y
        signal = output
    return 0.5 * signal / numpy.max(numpy.abs(signal))


def cents_from_a4(f0):
    return 1200 * numpy.log2(f0 / A4)


def share_near_semitones(f0, tolerance=20):
    """The share of voiced frames within `tolerance` cents of a semitone of A4."""
    cents = cents_from_a4(f0[f0 > 0])
    return float(numpy.mean(numpy.abs(cents - 100 * numpy.round(cents / 100)) <= tolerance))


def fit_sinusoid(times, values, rates):
    """The rate among `rates` whose least-squares sinusoid (with an offset and a linear trend) explains most of
    `values`, and that sinusoid's amplitude."""
    best = (0.0, math.nan, 0.0)
    trend = numpy.column_stack([numpy.ones_like(times), times - times.mean()])
    for rate in rates:
        basis = numpy.column_stack([numpy.sin(2 * math.pi * rate * times), numpy.cos(2 * math.pi * rate * times), trend])
        coefficients, *_ = numpy.linalg.lstsq(basis, values, rcond=None)
        explained = numpy.sum((basis @ coefficients - values.mean()) ** 2)
        if explained > best[0]:
            best = (explained, rate, math.hypot(coefficients[0], coefficients[1]))
    return best[1], best[2]


class Bars:
    def __init__(self):
        self.results = []

    def check(self, name, passed, figures):
        self.results.append((name, passed, figures))

    def report(self):
        print()
        for name, passed, figures in self.results:
            print(f"{'PASS' if passed else 'FAIL'}  {name}: {figures}")
        return all(passed for _, passed, _ in self.results)


def speech_files(corpus, scratch):
    files = sorted((REPO / "samples").glob("*.wav"))
    if corpus and corpus.is_dir():
        for path in sorted(corpus.glob("*.wav")):
            target = scratch / f"{path.stem}-16k.wav"
            subprocess.run(["sox", "-D", "-V1", str(path), "-b", "16", str(target), "rate", "-v", "16000"], check=True)
            files.append(target)
    return files


def curve_bar(binary, files, scratch, bars):
    errors = []
    for path in files:
        samples, rate = soundfile.read(path)
        seconds = len(samples) / rate
        curve = scratch / f"{path.stem}-curve.csv"
        curve.write_text(f"time,ratio\n0,1.0\n{seconds},{CURVE_END_RATIO}\n")
        output = scratch / f"{path.stem}-curved.wav"
        koe(binary, path, output, "--pitch-curve", curve)
        floor, ceiling = speaker_range(samples, rate)
        times, f0_in = praat_pitch(samples, rate, floor, ceiling)
        _, f0_out = praat_pitch(soundfile.read(output)[0], rate, floor, ceiling * CURVE_END_RATIO)
        both = (f0_in > 0) & (f0_out > 0)
        expected = numpy.interp(times[both], [0, seconds], [1.0, CURVE_END_RATIO])
        error = float(numpy.median(numpy.abs(f0_out[both] / f0_in[both] / expected - 1)))
        errors.append(error)
        print(f"(a) {path.name:16} curve 1.0 -> {CURVE_END_RATIO} over {seconds:.2f} s: median error "
              f"{100 * error:.2f} % over {both.sum()} frames")
    bars.check("(a) --pitch-curve follows the curve, median error <= 2 % on every file", max(errors) <= 0.02,
               "worst " + f"{100 * max(errors):.2f} %, files " + ", ".join(f"{100 * e:.2f}" for e in errors))


def f0_file_bar(binary, files, scratch, bars):
    medians = []
    for path in files:
        samples, rate = soundfile.read(path)
        analysis = scratch / f"{path.stem}-analysis"
        koe(binary, "analyze", path, "--output-dir", analysis)
        analysed = numpy.load(analysis / "f0.npy")
        given = scratch / f"{path.stem}-f0.npy"
        numpy.save(given, numpy.where(analysed > 0, 200.0, 0.0))
        output = scratch / f"{path.stem}-200.wav"
        koe(binary, path, output, "--f0-file", given)
        _, f0 = praat_pitch(soundfile.read(output)[0], rate, 100, 400)
        median = float(numpy.median(f0[f0 > 0]))
        medians.append(median)
        print(f"(b) {path.name:16} --f0-file of 200 Hz on {int((analysed > 0).sum())} voiced frames: "
              f"output median F0 {median:.1f} Hz")
    worst = max(abs(median / 200 - 1) for median in medians)
    bars.check("(b) --f0-file 200 Hz: output median F0 within 2 % of 200 Hz on every file", worst <= 0.02,
               f"worst {100 * worst:.2f} % off, medians " + ", ".join(f"{median:.1f}" for median in medians) + " Hz")


def snap_bar(binary, scratch, bars):
    seconds = 4.0
    glide = vowel(lambda t: 150 * 2 ** (t / seconds), seconds)
    source = scratch / "glide.wav"
    soundfile.write(source, glide, VOWEL_RATE, subtype="PCM_16")
    output = scratch / "glide-snapped.wav"
    koe(binary, source, output, "--snap", "chromatic", "--snap-strength", "1")
    _, f0_in = praat_pitch(glide, VOWEL_RATE, 60, 700)
    _, f0_out = praat_pitch(soundfile.read(output)[0], VOWEL_RATE, 60, 700)
    before, after = share_near_semitones(f0_in), share_near_semitones(f0_out)
    print(f"(c) glide 150 -> 300 Hz: within 20 cents of a semitone: input {100 * before:.1f} %, "
          f"--snap chromatic {100 * after:.1f} % of {int((f0_out > 0).sum())} voiced frames")
    bars.check("(c) --snap chromatic: >= 85 % of voiced frames within 20 cents of a semitone", after >= 0.85,
               f"{100 * after:.1f} % (the glide itself: {100 * before:.1f} %)")


def vibrato_bar(binary, scratch, bars):
    seconds = 4.0
    steady = vowel(lambda t: numpy.full_like(t, 150.0), seconds)
    source = scratch / "steady.wav"
    soundfile.write(source, steady, VOWEL_RATE, subtype="PCM_16")
    output = scratch / "vibrato.wav"
    koe(binary, source, output, "--vibrato", "5.5:50")
    times, f0 = praat_pitch(soundfile.read(output)[0], VOWEL_RATE, 60, 700)
    middle = (times > 0.5) & (times < 3.5) & (f0 > 0)
    cents = 1200 * numpy.log2(f0[middle] / numpy.median(f0[middle]))
    rate, depth = fit_sinusoid(times[middle], cents, numpy.arange(2.0, 12.0, 0.001))
    print(f"(d) --vibrato 5.5:50 on a steady 150 Hz vowel: fitted rate {rate:.3f} Hz, depth {depth:.1f} cents "
          f"over {middle.sum()} frames")
    bars.check("(d) --vibrato 5.5:50: rate within 5 %, depth within 20 %",
               abs(rate / 5.5 - 1) <= 0.05 and abs(depth / 50 - 1) <= 0.2,
               f"rate {rate:.3f} Hz ({100 * (rate / 5.5 - 1):+.2f} %), depth {depth:.1f} cents "
               f"({100 * (depth / 50 - 1):+.1f} %)")


def tone_bar(binary, scratch, bars):
    rate, seconds = 48000, 3
    tone = 10 ** (-0.5 / 20) * numpy.sin(2 * math.pi * 150 * numpy.arange(rate * seconds) / rate)
    source = scratch / "tone.wav"
    soundfile.write(source, tone, rate, subtype="PCM_16")
    limited = koe(binary, source, scratch / "tone-limited.wav", "--pitch", "1.2", "--json")
    unlimited = koe(binary, source, scratch / "tone-clipped.wav", "--pitch", "1.2", "--json", "--no-limit")
    peak = float(numpy.max(numpy.abs(soundfile.read(scratch / "tone-limited.wav")[0])))
    print(f"(e) -0.5 dBFS 150 Hz tone, --pitch 1.2: clipped samples {limited['clipped_samples']} of "
          f"{rate * seconds} (peak {20 * math.log10(peak):.3f} dBFS); with --no-limit "
          f"{unlimited['clipped_samples']}; latency bound {limited['latency_bound_ms']:.2f} ms "
          f"(--no-limit {unlimited['latency_bound_ms']:.2f} ms)")
    bars.check("(e) -0.5 dBFS tone with --pitch 1.2: zero clipped samples", limited["clipped_samples"] == 0,
               f"{limited['clipped_samples']} clipped (--no-limit: {unlimited['clipped_samples']})")


def headroom_bar(binary, files, scratch, bars):
    identical = []
    for path in files:
        limited, plain = scratch / f"{path.stem}-limited.wav", scratch / f"{path.stem}-plain.wav"
        koe(binary, path, limited, "--pitch", "1.2", "--formant", "1.1")
        clipped = koe(binary, path, plain, "--pitch", "1.2", "--formant", "1.1", "--no-limit", "--json")["clipped_samples"]
        same = limited.read_bytes() == plain.read_bytes()
        a, b = soundfile.read(limited)[0], soundfile.read(plain)[0]
        noise = numpy.sum((a - b) ** 2)
        snr = "inf" if noise == 0 else f"{10 * math.log10(numpy.sum(b ** 2) / noise):.1f}"
        peak = 20 * math.log10(numpy.max(numpy.abs(b)))
        if clipped == 0:
            identical.append(same)
            verdict = f"{'identical' if same else 'DIFFERENT'} with and without --no-limit (SNR {snr} dB)"
        else:
            verdict = f"no headroom: {clipped} samples clip without the limiter; limited, SNR {snr} dB (not in the bar)"
        print(f"(f) {path.name:16} --pitch 1.2 --formant 1.1, peak without limiter {peak:.1f} dBFS: {verdict}")
    bars.check("(f) speech with headroom: identical with and without --no-limit", bool(identical) and all(identical),
               f"{sum(identical)} of {len(identical)} files with headroom identical byte for byte")


def main():
    arguments = parse_with_koe(corpus_parser("issue 14's bars: curves, F0 files, snap, vibrato, limiter"))
    binary = arguments.koe.resolve()
    bars = Bars()
    with tempfile.TemporaryDirectory(prefix="koe-curves-") as folder:
        scratch = Path(folder)
        files = speech_files(arguments.corpus, scratch)
        curve_bar(binary, files, scratch, bars)
        f0_file_bar(binary, files, scratch, bars)
        snap_bar(binary, scratch, bars)
        vibrato_bar(binary, scratch, bars)
        tone_bar(binary, scratch, bars)
        headroom_bar(binary, files, scratch, bars)
    sys.exit(0 if bars.report() else 1)


if __name__ == "__main__":
    main()
